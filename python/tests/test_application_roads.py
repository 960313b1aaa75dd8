"""The road from a key migration to a running application, with real
frameworks on the test PostgreSQL server, as docs/APPLICATION.md tells it:
Django (the model changed in the same deploy, `migrate --fake` where the
migration ran, the order everywhere else) and SQLAlchemy with Alembic (an
empty revision marking the change, `alembic check` clean once the old keys
are completed). Each framework's commands run as a user runs them."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap
import uuid

import psycopg
import pytest

from conftest import ADMIN, PORT, run_cli


def drop(name: str) -> None:
    with psycopg.connect(f"{ADMIN}/postgres", autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture()
def fresh():
    """Makes fresh databases owned by the login role (each by its name),
    dropped after the test."""
    made = []

    def make(name: str) -> str:
        drop(name)
        with psycopg.connect(f"{ADMIN}/postgres", autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{name}" OWNER uuidforge')
        made.append(name)
        return name

    yield make
    for name in made:
        drop(name)


def url(name: str) -> str:
    return f"postgresql://uuidforge:uuidforge@127.0.0.1:{PORT}/{name}"


def migrate_key(cli: str, db: str, table: str, *more: str) -> str:
    """`uuidforge db migrate-key` as the operator runs it (its key file and
    backup in the working directory)."""
    return run_cli(cli, "db", "--db", url(db), "migrate-key", table, *more)


# --- Django -----------------------------------------------------------------

MODELS_BIGINT = """
from django.db import models


class Account(models.Model):
    name = models.CharField(max_length=50)


class Document(models.Model):
    account = models.ForeignKey(Account, on_delete=models.CASCADE)
    title = models.CharField(max_length=50)
"""

# The model change that ships with the migration: the key is a UUIDField
# the application fills with uuidforge.uuid7.
MODELS_UUID = """
import uuidforge
from django.db import models


class Account(models.Model):
    id = models.UUIDField(primary_key=True, default=uuidforge.uuid7, editable=False)
    name = models.CharField(max_length=50)


class Document(models.Model):
    account = models.ForeignKey(Account, on_delete=models.CASCADE)
    title = models.CharField(max_length=50)
"""

SETTINGS = f"""
import os

DATABASES = {{
    "default": {{
        "ENGINE": "django.db.backends.postgresql",
        "NAME": os.environ["ROAD_DB"],
        "USER": "uuidforge",
        "PASSWORD": "uuidforge",
        "HOST": "127.0.0.1",
        "PORT": "{PORT}",
    }}
}}
INSTALLED_APPS = ["shop"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
SECRET_KEY = "the road test"
"""


class Project:
    """A Django project in a directory: settings, the app `shop`."""

    def __init__(self, root: pathlib.Path):
        self.root = root
        (root / "shop" / "migrations").mkdir(parents=True)
        (root / "shop" / "__init__.py").write_text("")
        (root / "shop" / "migrations" / "__init__.py").write_text("")
        (root / "road_settings.py").write_text(SETTINGS)
        self.models(MODELS_BIGINT)

    def models(self, text: str) -> None:
        (self.root / "shop" / "models.py").write_text(text)

    def run(self, db: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        env = dict(os.environ, DJANGO_SETTINGS_MODULE="road_settings", ROAD_DB=db, PYTHONPATH=str(self.root))
        done = subprocess.run([sys.executable, *args], cwd=self.root, env=env, capture_output=True, text=True)
        if check and done.returncode != 0:
            raise AssertionError(f"{args}: {done.stdout}{done.stderr}")
        return done

    def manage(self, db: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return self.run(db, "-m", "django", *args, check=check)

    def orm(self, db: str, code: str, check: bool = True) -> subprocess.CompletedProcess:
        prelude = "import django\ndjango.setup()\nfrom shop.models import Account, Document\n"
        return self.run(db, "-c", prelude + textwrap.dedent(code), check=check)


def test_django_road_from_bigint_keys_to_uuid7_keys(cli, fresh, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    project = Project(tmp_path / "project")
    db = fresh(f"uf_py_django_road_{os.getpid()}")
    project.manage(db, "makemigrations", "shop")
    project.manage(db, "migrate")
    project.orm(
        db,
        """
        accounts = Account.objects.bulk_create(Account(name=f"a{i}") for i in range(1, 21))
        Document.objects.bulk_create(Document(account=accounts[i % 20], title=f"t{i}") for i in range(200))
        """,
    )
    before = project.orm(db, "print(sorted((d.title, d.account.name) for d in Document.objects.select_related('account')))").stdout

    # The operator migrates the key (plan first, then --apply).
    plan = migrate_key(cli, db, "shop_account", "--no-default")
    assert '"public"."shop_document".account_id' in plan and "nothing was changed" in plan
    migrate_key(cli, db, "shop_account", "--no-default", "--apply")

    # The old model's next query fails: the model change ships with the
    # migration, in the same deploy.
    old = project.orm(db, "print(Document.objects.filter(account_id=3).count())", check=False)
    assert old.returncode != 0 and "operator does not exist: uuid = integer" in old.stderr

    # The new model; makemigrations writes an AlterField naming the
    # public function; where the migration ran, it is recorded, not run.
    project.models(MODELS_UUID)
    project.manage(db, "makemigrations", "shop")
    written = next((project.root / "shop" / "migrations").glob("0002_*.py")).read_text()
    assert "import uuidforge" in written and "default=uuidforge.uuid7" in written, written
    assert "_native" not in written
    faked = project.manage(db, "migrate", "--fake", "shop")
    assert "FAKED" in faked.stdout, faked.stdout
    project.manage(db, "migrate", "--check")
    project.manage(db, "makemigrations", "--check", "--dry-run")

    # The ORM reads, follows the foreign key and creates on the new keys.
    after = project.orm(db, "print(sorted((d.title, d.account.name) for d in Document.objects.select_related('account')))").stdout
    assert after == before
    made = project.orm(
        db,
        """
        import uuid
        a = Account.objects.create(name="new")
        d = Document.objects.create(account=a, title="fresh")
        assert isinstance(a.pk, uuid.UUID) and a.pk.version == 7
        assert Document.objects.get(title="fresh").account.name == "new"
        assert Document.objects.filter(account__name="a3").count() == 10
        print(Account.objects.count(), a.pk)
        """,
    ).stdout.split()
    assert made[0] == "21" and uuid.UUID(made[1]).version == 7

    # Every other environment builds its database from the migrations: a
    # plain `migrate` cannot cast bigint keys to uuid ...
    other = fresh(f"uf_py_django_other_{os.getpid()}")
    plain = project.manage(other, "migrate", check=False)
    assert plain.returncode != 0 and "cannot cast type bigint to uuid" in plain.stderr, plain.stderr
    # ... so the order there is: the migrations before it, the key
    # migration, the AlterField recorded, the rest.
    project.manage(other, "migrate", "shop", "0001")
    migrate_key(cli, other, "shop_account", "--no-default", "--apply")
    project.manage(other, "migrate", "--fake", "shop", "0002")
    project.manage(other, "migrate")
    project.manage(other, "migrate", "--check")
    project.orm(other, "a = Account.objects.create(name='x'); Document.objects.create(account=a, title='y'); assert a.pk.version == 7")

    # Once the application runs on the new keys, the old ones go.
    migrate_key(cli, db, "shop_account", "--complete", "--apply")
    project.manage(db, "makemigrations", "--check", "--dry-run")
    assert project.orm(db, "print(Document.objects.count())").stdout.strip() == "201"


# --- SQLAlchemy and Alembic -------------------------------------------------

SA_BIGINT = """
from sqlalchemy import BigInteger, ForeignKey, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    pass


class Account(Base):
    __tablename__ = "accounts"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    name: Mapped[str] = mapped_column(String(50))


class Document(Base):
    __tablename__ = "documents"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    title: Mapped[str] = mapped_column(String(50))
    account: Mapped[Account] = relationship()
"""

SA_UUID = """
import uuid

import uuidforge
from sqlalchemy import BigInteger, ForeignKey, String, Uuid
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    pass


class Account(Base):
    __tablename__ = "accounts"
    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuidforge.uuid7)
    name: Mapped[str] = mapped_column(String(50))


class Document(Base):
    __tablename__ = "documents"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id"))
    title: Mapped[str] = mapped_column(String(50))
    account: Mapped[Account] = relationship()
"""


def test_sqlalchemy_and_alembic_road_from_bigint_keys_to_uuid7_keys(cli, fresh, tmp_path, monkeypatch):
    import importlib

    from alembic import command
    from alembic.config import Config
    from alembic.util.exc import AutogenerateDiffsDetected
    from sqlalchemy import create_engine, exc, func, select
    from sqlalchemy.orm import Session

    monkeypatch.chdir(tmp_path)
    (tmp_path / "sa_v1.py").write_text(SA_BIGINT)
    (tmp_path / "sa_v2.py").write_text(SA_UUID)
    monkeypatch.syspath_prepend(str(tmp_path))
    db = fresh(f"uf_py_alembic_road_{os.getpid()}")
    cfg = Config(str(tmp_path / "alembic.ini"))
    cfg.set_main_option("script_location", str(tmp_path / "migrations"))
    cfg.set_main_option("sqlalchemy.url", f"postgresql+psycopg://uuidforge:uuidforge@127.0.0.1:{PORT}/{db}")
    command.init(cfg, str(tmp_path / "migrations"))
    env = tmp_path / "migrations" / "env.py"
    env.write_text(
        env.read_text().replace(
            "target_metadata = None",
            "import importlib, os\ntarget_metadata = importlib.import_module(os.environ['ROAD_MODELS']).Base.metadata",
        )
    )
    monkeypatch.setenv("ROAD_MODELS", "sa_v1")
    v1 = importlib.import_module("sa_v1")
    first = command.revision(cfg, message="accounts and documents", autogenerate=True)
    command.upgrade(cfg, "head")
    engine = create_engine(cfg.get_main_option("sqlalchemy.url"))
    with Session(engine) as s:
        accounts = [v1.Account(name=f"a{i}") for i in range(1, 21)]
        s.add_all(accounts)
        s.add_all(v1.Document(account=accounts[i % 20], title=f"t{i}") for i in range(200))
        s.commit()
        before = sorted((d.title, d.account.name) for d in s.scalars(select(v1.Document)))

    migrate_key(cli, db, "accounts", "--no-default", "--apply")
    engine.dispose()
    # The old model's next query fails: the model ships with the migration.
    with Session(engine) as s, pytest.raises(exc.ProgrammingError, match="operator does not exist: uuid = bigint"):
        s.get(v1.Account, 3)

    # The change is a revision with nothing to run, marking where the
    # schema is: stamped where uuidforge ran.
    marker = command.revision(cfg, message="uuid7 keys: uuidforge db migrate-key accounts --apply")
    command.stamp(cfg, marker.revision)
    monkeypatch.setenv("ROAD_MODELS", "sa_v2")
    v2 = importlib.import_module("sa_v2")
    with Session(engine) as s:
        after = sorted((d.title, d.account.name) for d in s.scalars(select(v2.Document)))
        assert after == before
        a = v2.Account(name="new")
        s.add(v2.Document(account=a, title="fresh"))
        s.commit()
        assert a.id.version == 7
        assert s.scalar(select(func.count()).select_from(v2.Document).join(v2.Account).where(v2.Account.name == "a3")) == 10
    # Alembic compares the database with the model: the old columns are
    # the difference until the migration is completed.
    with pytest.raises(AutogenerateDiffsDetected, match="id_old"):
        command.check(cfg)
    migrate_key(cli, db, "accounts", "--complete", "--apply")
    engine.dispose()
    command.check(cfg)

    # Every other environment: the revisions before it, the key
    # migration, then the rest.
    other = fresh(f"uf_py_alembic_other_{os.getpid()}")
    cfg.set_main_option("sqlalchemy.url", f"postgresql+psycopg://uuidforge:uuidforge@127.0.0.1:{PORT}/{other}")
    command.upgrade(cfg, first.revision)
    migrate_key(cli, other, "accounts", "--no-default", "--apply")
    command.upgrade(cfg, "head")
    migrate_key(cli, other, "accounts", "--complete", "--apply")
    command.check(cfg)
    other_engine = create_engine(cfg.get_main_option("sqlalchemy.url"))
    with Session(other_engine) as s:
        s.add(v2.Document(account=v2.Account(name="x"), title="y"))
        s.commit()
    other_engine.dispose()
    engine.dispose()
