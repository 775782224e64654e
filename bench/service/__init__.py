"""The HTTP service: the example login services under real servers and a real flood of logins."""
