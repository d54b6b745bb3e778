"""Regenerate the Python bindings of proto/uno_arena/v1/*.proto, next to them.

Run `python proto/generate.py` after editing a .proto; CI runs it with
`--check` and fails if the checked-in bindings differ. Uses the pinned
grpcio-tools (see pyproject's dev extra), so output is reproducible.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent
PACKAGE = ROOT / "uno_arena" / "v1"


def generate(out: Path) -> None:
    protos = sorted(str(p.relative_to(ROOT)) for p in PACKAGE.glob("*.proto"))
    include = Path(protoc.__file__).parent / "_proto"
    args = ["protoc", f"-I{ROOT}", f"-I{include}", f"--python_out={out}", f"--pyi_out={out}",
            f"--grpc_python_out={out}", *protos]  # fmt: skip
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")


def generated_files(base: Path) -> dict[str, bytes]:
    folder = base / "uno_arena" / "v1"
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*_pb2*.py*"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the checked-in bindings are stale")
    args = parser.parse_args()
    if not args.check:
        generate(ROOT)
        print(f"generated {len(generated_files(ROOT))} files in {PACKAGE}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        fresh, current = generated_files(Path(tmp)), generated_files(ROOT)
    if fresh != current:
        stale = sorted(set(fresh) ^ set(current) | {n for n in fresh if fresh.get(n) != current.get(n)})
        sys.exit(f"generated bindings are stale: {', '.join(stale)}; run python proto/generate.py")
    print("generated bindings are up to date")


if __name__ == "__main__":
    main()
