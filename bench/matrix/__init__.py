"""The fill's trade-off matrix (ISA level x lanes x multiplies x memory x threads), its peers
(argon2id, scrypt, the memory bandwidth), its report and its plots."""
