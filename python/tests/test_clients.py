"""The real clients take the values as they are: psycopg 3 on the test
PostgreSQL server, SQLAlchemy's Uuid type, Django's UUIDField on
PostgreSQL, pydantic's UUID types; and SQL computes the same keyed values
and times."""

from __future__ import annotations

import datetime as dt
import uuid

import psycopg
import pytest

import uuidforge

UTC = dt.timezone.utc


def test_psycopg_writes_and_reads_uuid_columns(database):
    values = uuidforge.uuid7_batch(2000)
    with psycopg.connect(database) as conn:
        conn.execute("CREATE TABLE orders (id uuid PRIMARY KEY, n int)")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO orders VALUES (%s, %s)", [(v, i) for i, v in enumerate(values)])
            with cur.copy("COPY orders (id, n) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(["uuid", "int4"])
                for i, v in enumerate(uuidforge.uuid7_batch(1000)):
                    copy.write_row((v, 10_000 + i))
        rows = conn.execute("SELECT id, n FROM orders ORDER BY id").fetchall()
        assert len(rows) == 3000
        # PostgreSQL's uuid order is the values' order: insertion order here.
        assert [n for _, n in rows[:2000]] == list(range(2000))
        assert [r[0] for r in rows[:2000]] == values
        assert all(type(r[0]) is uuid.UUID for r in rows)
        one = conn.execute("SELECT %s::uuid", (values[7],)).fetchone()[0]
        assert one == values[7]


def test_sql_gives_the_same_keyed_values_and_times(database):
    at = 1_645_557_742_123
    secret = b"0123456789abcdef0123456789abcdef"
    with psycopg.connect(database) as conn:
        ts = "timestamptz 'epoch' + %s * interval '1 millisecond'"
        for key in ["orders:42", "", "ключ"]:
            sql = conn.execute(f"SELECT uuidv7_from({ts}, %s::text)", (at, key)).fetchone()[0]
            assert sql == uuidforge.uuid7_from(at, key)
            sql = conn.execute(f"SELECT uuidv7_from({ts}, %s::text, %s::bytea)", (at, key, secret)).fetchone()[0]
            assert sql == uuidforge.uuid7_from(at, key, secret=secret)
        sql = conn.execute(f"SELECT uuidv7_from({ts}, %s::bytea)", (at, b"\x00\xff")).fetchone()[0]
        assert sql == uuidforge.uuid7_from(at, b"\x00\xff")
        for value in uuidforge.uuid7_batch(50, profile="pg18") + [uuidforge.uuid7(at=at)]:
            sql_time = conn.execute("SELECT uuid_extract_timestamp(%s)", (value,)).fetchone()[0]
            assert sql_time == uuidforge.timestamp(value).replace(microsecond=uuidforge.timestamp(value).microsecond // 1000 * 1000)
        made_in_sql = conn.execute("SELECT uuidv7() FROM generate_series(1, 100)").fetchall()
        for (v,) in made_in_sql:
            assert uuidforge.inspect(v).version == 7


def test_sqlalchemy_uuid_type_with_uuid7_default(database):
    import sqlalchemy
    from sqlalchemy import Column, Integer, MetaData, Table, Uuid, create_engine, insert, select

    engine = create_engine(database.replace("postgresql://", "postgresql+psycopg://"))
    meta = MetaData()
    items = Table(
        "items",
        meta,
        Column("id", Uuid(as_uuid=True), primary_key=True, default=uuidforge.uuid7),
        Column("n", Integer),
    )
    meta.create_all(engine)
    with engine.begin() as conn:
        for i in range(100):
            conn.execute(insert(items).values(n=i))
        rows = conn.execute(select(items.c.id, items.c.n).order_by(items.c.id)).all()
    assert [n for _, n in rows] == list(range(100))
    assert all(type(r.id) is uuid.UUID and r.id.version == 7 for r in rows)
    engine.dispose()
    assert int(sqlalchemy.__version__.split(".")[0]) >= 2


def test_django_uuidfield_default_on_postgresql(database):
    import django
    from django.conf import settings

    name = database.rsplit("/", 1)[1]
    port = database.rsplit(":", 1)[1].split("/")[0]
    if not settings.configured:
        settings.configure(
            DATABASES={
                "default": {
                    "ENGINE": "django.db.backends.postgresql",
                    "NAME": name,
                    "USER": "uuidforge",
                    "PASSWORD": "uuidforge",
                    "HOST": "127.0.0.1",
                    "PORT": port,
                }
            },
            INSTALLED_APPS=["django.contrib.contenttypes"],
            USE_TZ=True,
        )
        django.setup()
    from django.db import connection, models

    class Ticket(models.Model):
        id = models.UUIDField(primary_key=True, default=uuidforge.uuid7, editable=False)
        title = models.CharField(max_length=50)

        class Meta:
            app_label = "uuidforge_tests"

    with connection.schema_editor() as editor:
        editor.create_model(Ticket)
    made = [Ticket.objects.create(title=f"t{i}") for i in range(50)]
    assert all(type(t.id) is uuid.UUID and t.id.version == 7 for t in made)
    read = list(Ticket.objects.order_by("id").values_list("id", "title"))
    assert read == [(t.id, t.title) for t in made]
    assert Ticket.objects.get(pk=made[3].id).title == "t3"
    connection.close()


def test_a_django_migration_names_the_public_function():
    # What `makemigrations` writes for `default=uuidforge.uuid7`: the
    # package's name, never its private native module.
    from django.db.migrations.serializer import serializer_factory

    for function in (uuidforge.uuid7, uuidforge.uuid4, uuidforge.parse):
        assert function.__module__ == "uuidforge"
        text, imports = serializer_factory(function).serialize()
        assert text == f"uuidforge.{function.__name__}" and imports == {"import uuidforge"}
    exec(compile("import uuidforge\nf = " + text, "<migration>", "exec"), {})
    assert all(
        getattr(uuidforge, name).__module__ == "uuidforge"
        for name in uuidforge.__all__
        if callable(getattr(uuidforge, name)) and not name.startswith("_")
    )


def test_pydantic_takes_the_values():
    from pydantic import UUID4, UUID7, BaseModel, Field, ValidationError

    class Order(BaseModel):
        id: UUID7 = Field(default_factory=uuidforge.uuid7)
        any_id: uuid.UUID

    o = Order(any_id=uuidforge.uuid7())
    assert type(o.id) is uuid.UUID and o.id.version == 7
    assert Order.model_validate_json(o.model_dump_json()) == o
    with pytest.raises(ValidationError):
        Order(id=uuidforge.uuid4(), any_id=uuidforge.uuid7())

    class Legacy(BaseModel):
        id: UUID4

    assert Legacy(id=uuidforge.uuid4()).id.version == 4
