"""TwoCats key derivation: parameters to output, over a choice of compute backends."""
