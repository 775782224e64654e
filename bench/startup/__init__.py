"""Start-up and compilation: whole processes against argon2-cffi's, and kernel compile time and
hot loops against an earlier commit."""
