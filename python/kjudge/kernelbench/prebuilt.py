"""A candidate's `load_inline` builds, made by a build worker apart from judging and loaded by the
judging worker without building again (kjudge.kernelbench.build).

Both workers wrap `torch.utils.cpp_extension.load_inline` before any of the candidate's code
runs. Each call is keyed by its arguments (`call_key`: the sources, functions, flags and name,
not where it builds or how verbosely). The build worker (`record_builds`) lets torch build, then
copies the extension into its output folder as KEY.so and lists the call in record.json, with
the build's message where it failed. The judging worker (`use_builds`) imports KEY.so for a call
the record lists as built, raises the recorded message for one whose compiler refused it, and
builds anything else itself, as before: a candidate whose sources differ between the two
processes only pays its own build again. The record is the candidate's own process's word about
the candidate's own source (the cache keys it by that source), so it can make the candidate no
better than building would."""
from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import os
import shutil
from typing import Optional

RECORD = "record.json"
# What a failed build left in its message when the machine, not the compiler, stopped it: such a
# build is made again by the judging worker rather than replayed as the candidate's error.
_NOT_THE_COMPILERS = ("Killed", "signal", "out of memory", "Cannot allocate memory",
                      "No space left", "Resource temporarily unavailable")
# Arguments that say where or how loudly to build, not what.
_NOT_WHAT = ("build_directory", "verbose", "keep_intermediates")


def call_key(real, args: tuple, kwargs: dict) -> str:
    """The digest of what a load_inline call builds."""
    bound = inspect.signature(real).bind(*args, **kwargs)
    bound.apply_defaults()
    what = {k: v for k, v in bound.arguments.items() if k not in _NOT_WHAT}
    text = json.dumps(what, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def record_builds(folder: str, pch: Optional[str] = None) -> None:
    """The build worker's wrapper: every load_inline call built and recorded in `folder`. With
    `pch`, the folder of torch's precompiled header (kjudge.kernelbench.build.torch_header_pch)
    comes first on the call's include path: main.cpp's `#include <torch/extension.h>` then reads
    it where its flags are the header's, and the text otherwise; the object is the same."""
    from torch.utils import cpp_extension
    real = cpp_extension.load_inline
    os.makedirs(folder, exist_ok=True)
    record: dict = {}

    def with_header(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        if not pch:
            return args, kwargs
        bound = inspect.signature(real).bind(*args, **kwargs)
        theirs = bound.arguments.get("extra_include_paths") or []
        bound.arguments["extra_include_paths"] = [pch] + ([theirs] if isinstance(theirs, str)
                                                          else list(theirs))
        return bound.args, bound.kwargs

    def write_record() -> None:
        with open(os.path.join(folder, RECORD), "w") as f:
            json.dump(record, f)

    def load_inline(*args, **kwargs):
        key = call_key(real, args, kwargs)  # what the candidate asked for, not the header
        try:
            asked, named = with_header(args, kwargs)
            module = real(*asked, **named)
        except BaseException as e:
            record[key] = {"error": f"{type(e).__name__}: {e}"[-20000:]}
            write_record()
            raise
        path = getattr(module, "__file__", None) if not isinstance(module, str) else module
        if path and os.path.isfile(path) and not isinstance(module, str):
            shutil.copyfile(path, os.path.join(folder, key + ".so"))
            record[key] = {"so": key + ".so", "name": module.__name__}
            write_record()
        return module

    cpp_extension.load_inline = load_inline


def use_builds(folder: str) -> dict:
    """The judging worker's wrapper: the builds `folder` holds loaded, the others made. Returns
    the counts it keeps of each ("loaded", "replayed" failures, "made" here)."""
    from torch.utils import cpp_extension
    real = cpp_extension.load_inline
    try:
        with open(os.path.join(folder, RECORD)) as f:
            record = json.load(f)
    except (OSError, ValueError):
        record = {}
    if not isinstance(record, dict):
        record = {}
    counts = {"loaded": 0, "replayed": 0, "made": 0}

    def load_inline(*args, **kwargs):
        key = call_key(real, args, kwargs)
        built = record.get(key)
        if isinstance(built, dict) and isinstance(built.get("error"), str) and \
                not any(word in built["error"] for word in _NOT_THE_COMPILERS):
            counts["replayed"] += 1
            raise RuntimeError(built["error"])
        if isinstance(built, dict) and built.get("so") == key + ".so" and \
                isinstance(built.get("name"), str):
            path = os.path.join(folder, key + ".so")
            spec = importlib.util.spec_from_file_location(built["name"], path)
            if spec is not None and spec.loader is not None and os.path.isfile(path):
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                counts["loaded"] += 1
                return module
        counts["made"] += 1
        return real(*args, **kwargs)

    cpp_extension.load_inline = load_inline
    return counts
