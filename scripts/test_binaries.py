"""The test binaries cargo built, so that the test command builds the tests
once and runs some of them again against another server (PostgreSQL 18)
without cargo, which would build them again for another feature set.

  python3 scripts/test_binaries.py list < cargo-messages.json > binaries.tsv
      reads `cargo test --no-run --message-format=json`, writes one line per
      test binary: package, target, manifest directory, executable;
  python3 scripts/test_binaries.py run binaries.tsv PACKAGE[:TARGET]...
      runs the binaries of those packages (every target) or targets, each
      from its package's directory as cargo does; all of them even when one
      fails; exit 1 if any failed.
"""

import json
import os
import subprocess
import sys


def listing():
    for line in sys.stdin:
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if m.get("reason") != "compiler-artifact" or not m.get("executable"):
            continue
        if not m.get("profile", {}).get("test"):
            continue
        package = m["package_id"]
        # "path+file:///…/crates/uuidforge-db#uuidforge-db@0.3.0" or the
        # older "uuidforge-db 0.3.0 (path+file:///…)".
        name = m["target"]["name"]
        manifest = os.path.dirname(m["manifest_path"])
        pkg = os.path.basename(manifest) if "#" in package else package.split()[0]
        print(f"{pkg}\t{name}\t{manifest}\t{m['executable']}")


def run(path, selectors):
    rows = [line.rstrip("\n").split("\t") for line in open(path) if line.strip()]
    failed = []
    ran = 0
    for pkg, target, manifest, exe in rows:
        if not any(s == pkg or s == f"{pkg}:{target}" for s in selectors):
            continue
        ran += 1
        print(f"     Running {os.path.relpath(exe)} ({pkg}, {target})", flush=True)
        if subprocess.call([exe], cwd=manifest) != 0:
            failed.append(f"{pkg}:{target}")
    missing = [s for s in selectors if not any(s == p or s == f"{p}:{t}" for p, t, _, _ in rows)]
    if missing:
        print(f"no test binary for: {' '.join(missing)}", file=sys.stderr)
        return 1
    print(f"test binaries: {ran} run, {len(failed)} failed{': ' + ' '.join(failed) if failed else ''}")
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["list"]:
        listing()
    elif sys.argv[1:2] == ["run"] and len(sys.argv) > 3:
        sys.exit(run(sys.argv[2], sys.argv[3:]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
