"""The import name is `scalecost`; the source folder stays `service/` (the repository's fixed shape).

pyproject.toml holds the metadata; this file only maps the folder to the name: every subpackage of `service/`
is installed as `scalecost.<subpackage>` (the code imports itself relatively, so it runs under either name from a
checkout, and only under `scalecost` once installed).
"""

from setuptools import find_namespace_packages, setup

PACKAGES = ["scalecost" + name[len("service") :] for name in find_namespace_packages(include=["service", "service.*"], exclude=["*__pycache__*"])]

# The alembic scripts stay at the top (`migrations/`, the repository's shape) and travel in the wheel as
# `scalecost/migrations`: an installed `scalecost db upgrade` finds them there (service/store/migrate.py).
MIGRATIONS = ["scalecost.migrations", "scalecost.migrations.versions"]

setup(
    packages=PACKAGES + MIGRATIONS,
    package_dir={"scalecost": "service", "scalecost.migrations": "migrations"},
)
