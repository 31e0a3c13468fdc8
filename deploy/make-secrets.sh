#!/bin/sh
# The secrets docker-compose.yml mounts (`make secrets`): a random PostgreSQL password and the DATABASE_URL that
# uses it, one file each in DIR (default deploy/secrets, git-ignored and docker-ignored). Existing files are kept:
# delete them and run it again to rotate (and change the role's password in PostgreSQL).
#
# The directory is the owner's alone (0700); the files are 0644 because compose (without swarm) bind-mounts a
# file secret as it is, and the API container's non-root user (uid 10001) must be able to read it.
set -eu
dir="${1:-$(dirname "$0")/secrets}"
mkdir -p "$dir"
chmod 700 "$dir"
umask 022
if [ ! -s "$dir/postgres_password" ]; then
  python3 -c 'import secrets; print(secrets.token_urlsafe(24))' > "$dir/postgres_password"
fi
if [ ! -s "$dir/database_url" ]; then
  printf 'postgresql+psycopg://scalecost:%s@db:5432/scalecost\n' "$(cat "$dir/postgres_password")" > "$dir/database_url"
fi
echo "secrets in $dir: postgres_password, database_url"
