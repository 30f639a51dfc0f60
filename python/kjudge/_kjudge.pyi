"""Type stub of kjudge._kjudge (python/module.cpp)."""
from typing import Any, Optional

version: str

def compare_json(actual: Any, expected: Any, reference: Optional[Any], policy: str, dtype: str,
                 expected_kind: str, slice: int, nan: str, statistics: bool, names: list[str]) -> str: ...
