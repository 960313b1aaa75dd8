"""Every operation of /api/openapi.json through a client generated from it by
a generator nobody here wrote (openapi-python-client, PyPI): each answer is
parsed into the model the document declares, and a refusal into its Error
model. scripts/web-test.sh generates the client (package `client` on
PYTHONPATH) and runs this against the server it started with --db and a
hide key.

    python client_test.py BASE_URL TOKEN
"""

import sys
import uuid

from client import AuthenticatedClient, Client
from client.api.default import (
    convert, database, database_columns, database_discover, database_find, database_page,
    database_related, delete_name, generate, get_name, healthz, hide, identicon, inspect,
    lookup_names, metrics, openapi, page, profiles, put_name, reveal, static_file,
)
from client.models import (
    ConvertBody, ConvertBodyTo, Error, HideBody, InspectBody, PutNameBody, RevealBody,
)

base, token = sys.argv[1], sys.argv[2]
anonymous = Client(base_url=base)
client = AuthenticatedClient(base_url=base, token=token)
KNOWN = "01890a5d-ac96-774b-bcce-b302099a8057"
called = []


def check(name, response, status=200, model=None):
    """The answer has `status` and was parsed (into `model` when given)."""
    assert response.status_code == status, f"{name}: {response.status_code} {response.content[:300]!r}"
    assert response.parsed is not None, f"{name}: not parsed: {response.content[:300]!r}"
    if model is not None:
        assert isinstance(response.parsed, model), f"{name}: {type(response.parsed)}"
    else:
        assert not isinstance(response.parsed, Error), f"{name}: {response.parsed}"
    called.append(name)
    return response.parsed


check("healthz", healthz.sync_detailed(client=anonymous))
check("openapi", openapi.sync_detailed(client=anonymous))
check("page", page.sync_detailed(client=anonymous))
check("static_file", static_file.sync_detailed("app.js", client=anonymous))
made = check("generate", generate.sync_detailed(client=anonymous, count=3))
assert len(made.uuids) == 3 and all(uuid.UUID(v).version == 7 for v in made.uuids)
found = check("inspect", inspect.sync_detailed(client=anonymous, body=InspectBody(values=[KNOWN])))
assert found.results[0]["version"] == 7, found.results[0]
converted = check("convert", convert.sync_detailed(
    client=anonymous, body=ConvertBody(values=[KNOWN], to=ConvertBodyTo.SIMPLE)))
assert converted.values == [KNOWN.replace("-", "")]
check("profiles", profiles.sync_detailed(client=anonymous))
svg = check("identicon", identicon.sync_detailed(f"{KNOWN}.svg", client=anonymous))
assert b"<svg" in svg
mine = str(uuid.uuid4())
check("put_name", put_name.sync_detailed(mine, client=client, body=PutNameBody(name="from a generated client")), 201)
named = check("get_name", get_name.sync_detailed(mine, client=client))
assert named.name == "from a generated client"
names = check("lookup_names", lookup_names.sync_detailed(client=client, uuids=mine))
assert names.names[mine] == "from a generated client"
assert delete_name.sync_detailed(mine, client=client).status_code == 204
called.append("delete_name")
check("database_page", database_page.sync_detailed(client=anonymous))
check("database", database.sync_detailed(client=client))
columns = check("database_columns", database_columns.sync_detailed(client=client))
assert any(c.table == "customers" for c in columns.columns)
hits = check("database_find", database_find.sync_detailed(client=client, value=KNOWN))
assert hits.summary.hits >= 3 and isinstance(hits.summary.skipped, list), hits
check("database_related", database_related.sync_detailed(client=client, column="public.orders.customer_id"))
keys = check("database_discover", database_discover.sync_detailed(client=client))
assert keys.primary_keys and keys.primary_keys[0].table, keys
hidden = check("hide", hide.sync_detailed(client=client, body=HideBody(values=[KNOWN])))
shown = check("reveal", reveal.sync_detailed(client=client, body=RevealBody(values=hidden.values)))
assert shown.values == [KNOWN]
check("metrics", metrics.sync_detailed(client=anonymous))
# Refusals come back as the Error model, naming the field.
refused = check("refusal", generate.sync_detailed(client=anonymous, count=0), 400, Error)
assert refused.error.field == "count", refused
refused = check("no token", get_name.sync_detailed(mine, client=anonymous), 401, Error)
operations = 22
assert len(set(called) - {"refusal", "no token"}) == operations, sorted(called)
print(f"generated client: {operations} operations called, every answer parsed")
