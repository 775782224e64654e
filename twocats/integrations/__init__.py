"""Adapters that make twocats the password hasher of web frameworks.

Each adapter is a submodule that imports only when its framework is installed:

* :mod:`twocats.integrations.django`: ``TwoCatsPasswordHasher`` for ``PASSWORD_HASHERS`` and the
  ``twocats_upgrade`` management command (``pip install -e '.[django]'``);
* :mod:`twocats.integrations.pwdlib`: ``TwoCatsHasher`` for pwdlib's ``PasswordHash``, as used
  with FastAPI (``pip install -e '.[pwdlib]'``);
* :mod:`twocats.integrations.passlib`: ``TwoCatsHandler`` for a ``CryptContext`` of libpass or
  passlib (``pip install -e '.[passlib]'``).

Importing this package imports no framework.
"""
