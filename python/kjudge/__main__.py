"""`python -m kjudge ARGS`: the kjudge CLI installed with the package (docs/cli.md). Its
KernelBench commands come back to this Python (KJUDGE_PYTHON), which has the package."""
import os
import sys
from pathlib import Path


def main() -> None:
    if sys.argv[1:2] == ["kernelbench"]:
        from kjudge.kernelbench.__main__ import main as kernelbench
        sys.exit(kernelbench(sys.argv[2:]))
    exe = Path(__file__).resolve().parent / "bin" / "kjudge"
    if not exe.exists():
        sys.exit(f"kjudge: the CLI is not installed beside the package ({exe})")
    os.environ.setdefault("KJUDGE_PYTHON", sys.executable)
    os.execv(str(exe), [str(exe), *sys.argv[1:]])


if __name__ == "__main__":
    main()
