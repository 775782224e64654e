"""tune --for: its settings work as pasted (a real Django project logs in); no fit says why."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from twocats import phc
from twocats.cli import main

django = pytest.importorskip("django", reason="the test extra installs Django")

#: A question cheap enough for the test: 2 at once within 8 MiB, a budget anything meets.
CHEAP = ["--time", "5s", "--concurrent", "2", "--server-memory", "8MiB"]


def _tune(*options: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["tune", *CHEAP, *options, "--json"])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


@pytest.fixture(scope="module")
def pasted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], Any]]:
    """Run tune --for django, paste its files into a project, and serve Django's login view."""
    from tests.support.django_project import configure, login_site

    document = _tune("--for", "django")
    root = tmp_path_factory.mktemp("project")
    files = {item["where"]: item["text"] for item in document["settings"]["files"]}
    assert list(files) == ["myproject/hashers.py", "settings.py"]
    (root / "myproject").mkdir()
    (root / "myproject" / "__init__.py").write_text("")
    (root / "myproject" / "hashers.py").write_text(files["myproject/hashers.py"] + "\n")
    settings: dict[str, Any] = {}
    exec(files["settings.py"], settings)  # the settings.py lines, as pasted
    sys.path.insert(0, str(root))
    configure(tmp_path_factory.mktemp("django"))
    try:
        with login_site(tmp_path_factory.mktemp("templates"), settings["PASSWORD_HASHERS"]):
            from myproject.hashers import TunedTwoCatsHasher  # type: ignore[import-not-found]

            yield document, TunedTwoCatsHasher
    finally:
        sys.path.remove(str(root))
        sys.modules.pop("myproject.hashers", None)
        sys.modules.pop("myproject", None)


def test_the_pasted_settings_log_a_user_in(pasted: tuple[dict[str, Any], Any]) -> None:
    """A user created under the pasted settings logs in through LoginView; a wrong one fails."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    document, _ = pasted
    user = get_user_model().objects.create_user("ada", password="correct horse")
    try:
        assert user.password.startswith("twocats" + document["phc_prefix"] + "$")
        assert len(user.password) <= 128
        wrong = Client().post("/login/", {"username": "ada", "password": "wrong"})
        assert wrong.status_code == 200
        client = Client()
        right = client.post("/login/", {"username": "ada", "password": "correct horse"})
        assert right.status_code == 302
        assert client.session["_auth_user_id"] == str(user.pk)
    finally:
        user.delete()


def test_the_pasted_hasher_has_the_bounds_printed(pasted: tuple[dict[str, Any], Any]) -> None:
    """The hasher the pasted class builds has the parameters and the bounds of the document."""
    document, hasher_class = pasted
    core = hasher_class().hasher
    assert core.params == phc.decode_params(document["phc_prefix"])
    assert document["bounds"] == {
        "max_concurrency": core.max_concurrency,
        "max_total_memory": core.max_total_memory,
        "timeout": core.timeout,
    }
    assert document["bounds"] == {"max_concurrency": 2, "max_total_memory": 8 << 20, "timeout": 5}


def test_for_django_picks_what_its_column_holds(pasted: tuple[dict[str, Any], Any]) -> None:
    """--for django keeps to 8 lanes and blake2s; 16 lanes asked for are refused up front."""
    document, _ = pasted
    params = phc.decode_params(document["phc_prefix"])
    assert (params.lanes, params.hash_type, params.output_size) == (8, "blake2s", 32)
    result = CliRunner().invoke(main, ["tune", *CHEAP, "--for", "django", "--lanes", "16"])
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: --for django: Django's 128-character password column holds 32-byte outputs "
        "only: give --lanes 8 or fewer\n"
    )


@pytest.mark.parametrize("framework", ["pwdlib", "passlib"])
def test_the_other_frameworks_settings_run_and_bound_the_hasher(framework: str) -> None:
    """The pwdlib and passlib settings run as pasted and build a hasher with the bounds."""
    pytest.importorskip(framework if framework == "pwdlib" else "passlib")
    document = _tune("--for", framework)
    (item,) = document["settings"]["files"]
    scope: dict[str, Any] = {}
    exec(item["text"], scope)  # the settings, as pasted
    if framework == "pwdlib":
        core = scope["password_hash"].hashers[0].hasher
        stored = scope["password_hash"].hash("pw")
    else:
        core = scope["context"].handler("twocats").hasher()
        stored = scope["context"].hash("pw")
    assert stored.startswith(document["phc_prefix"] + "$")
    assert (core.max_concurrency, core.max_total_memory, core.timeout) == (2, 8 << 20, 5.0)


def test_nothing_fits_says_how_many_cores_would() -> None:
    """A budget of a microsecond fits nothing: exit 1, with the cores that would make it fit."""
    options = ["--time", "1us", "--concurrent", "2", "--server-memory", "8MiB", "--lanes", "8"]
    result = CliRunner().invoke(main, ["tune", *options, "--json"])
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert document["within_budget"] is False
    assert "settings" not in document
    advice = document["advice"]
    assert advice["found"].startswith("even the cheapest parameters (1 MiB, multiplies 0) take ")
    assert advice["cores_needed"] >= 1
    assert advice["would_fit"].startswith("2 at once of 1 MiB need about ")
    human = CliRunner().invoke(main, ["tune", *options])
    assert human.exit_code == 1
    assert "No fit:       even the cheapest parameters" in human.stdout
    assert "What would:   2 at once of 1 MiB need about " in human.stdout
