"""`python -m kjudge ARGS`: the kjudge CLI installed with the package (docs/cli.md)."""
import os
import sys
from pathlib import Path


def main() -> None:
    exe = Path(__file__).resolve().parent / "bin" / "kjudge"
    if not exe.exists():
        sys.exit(f"kjudge: the CLI is not installed beside the package ({exe})")
    os.execv(str(exe), [str(exe), *sys.argv[1:]])


if __name__ == "__main__":
    main()
