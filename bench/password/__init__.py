"""The password path: derive and verify against argon2id, threads, load, limits, tuning, the
framework adapters, Django's decoy and the bulk upgrade."""
