"""The URLs of the Django login tests: Django's own login view at ``/login/``."""

from __future__ import annotations

from django.contrib.auth.views import LoginView
from django.urls import path

urlpatterns = [path("login/", LoginView.as_view(template_name="login.html"), name="login")]
