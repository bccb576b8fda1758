"""Package discovery for the one `gameforge` namespace over the repository's top-level folders.

pyproject.toml maps each folder to its part (`package-dir`); its packages are found here, so
a new subpackage ships without being listed anywhere.
"""

import tomllib
from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).resolve().parent
PARTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]

setup(
    packages=[
        name
        for part, folder in PARTS.items()
        for name in (part, *(f"{part}.{sub}" for sub in find_packages(str(ROOT / folder))))
    ]
)
