"""A small Django login service that stores twocats hashes, in SQLite, served by gunicorn.

From the ``examples`` folder, with ``pip install 'twocats[django]' gunicorn``::

    export DJANGO_SETTINGS_MODULE=django_login.settings
    django-admin migrate
    gunicorn django_login.wsgi -k gthread --workers 2 --threads 128 --bind 127.0.0.1:8000

(one worker process per core, and enough threads per worker for every connection a flood may
open: a login waiting for the hasher holds a thread).  Then ``POST /register`` and ``POST /login``
take ``{"username": ..., "password": ...}`` as JSON, as in the FastAPI example, and ``GET /health``
answers while logins queue.  See :mod:`django_login.views` for how a flood is answered.
"""
