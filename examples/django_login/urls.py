"""The service's three routes."""

from __future__ import annotations

from django.urls import path

from django_login import views

urlpatterns = [
    path("health", views.health),
    path("register", views.register),
    path("login", views.login),
]
