"""Schema migrations with alembic: `tmdns migrate` is `upgrade head`."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import make_url


def migrations_dir() -> Path:
    """Inside an installed wheel the scripts sit in app/migrations; in a source
    tree (and an editable install) in the top-level migrations/."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "migrations", package.parent / "migrations"):
        if (candidate / "env.py").is_file():
            return candidate
    raise FileNotFoundError("alembic migrations not found next to the app package")


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.attributes["url"] = url
    return config


def prepare_sqlite_directory(url: str) -> None:
    """The embedded default lives under var/; create the folder on first use."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (
        None,
        "",
        ":memory:",
    ):
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)


def upgrade(url: str, revision: str = "head") -> None:
    """Blocking: runs its own event loop, so call it from a thread inside async code."""
    prepare_sqlite_directory(url)
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str = "base") -> None:
    command.downgrade(alembic_config(url), revision)
