# One container that migrates, seeds and serves (docker-compose.yml runs the same image behind nginx).
# tests/contract/test_deployment.py reads this file: a base pinned to a full version, a non-root user, the
# locked dependency versions.
#
# The base is pinned to a full version tag (Python and Debian release): a rebuild next month gets the same
# interpreter. The lock file (requirements.lock) was made with Python 3.11; move both together.
FROM python:3.11.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# The service runs as this user, never as root. Its home holds gunicorn's control socket (~/.gunicorn);
# /data is the only other place it can write (the SQLite database of a lone container).
RUN groupadd --system --gid 10001 scalecost \
    && useradd --system --uid 10001 --gid scalecost --create-home --home-dir /home/scalecost \
        --shell /usr/sbin/nologin scalecost \
    && install -d -o scalecost -g scalecost -m 0750 /data

WORKDIR /app
# gunicorn binds HOST:PORT (service/gunicorn_conf.py, 127.0.0.1 by default): all interfaces inside a container
ENV HOST=0.0.0.0 PORT=8000
# Dependencies first, at the versions of requirements.lock (a constraints file: the dev tools it also pins are
# not installed), from pyproject.toml's list alone: a change to the code reuses this layer.
COPY requirements.lock pyproject.toml ./
RUN python -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies'], sep='\n')" \
        > /tmp/requirements.txt \
    && pip install -c requirements.lock -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt
# Then the service itself (its dependencies are all there) and its compiled translations.
COPY setup.py README.md ./
COPY service ./service
RUN pip install -c requirements.lock --no-deps -e . \
    && pybabel -q compile -d service/translations -D messages
COPY alembic.ini ./
COPY migrations ./migrations

USER 10001:10001
EXPOSE 8000
VOLUME ["/data"]
HEALTHCHECK --interval=10s --timeout=5s --retries=5 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/livez', timeout=3)"]

# Secrets come from the environment or from files: DATABASE_URL or DATABASE_URL_FILE=/run/secrets/…, likewise
# RATELIMIT_STORAGE_URI(_FILE) (service/config.py). With neither database setting, a SQLite file in /data.
# Migrate (idempotent), seed (never overwrites admin changes), then serve; SIGTERM reaches gunicorn (exec).
CMD ["sh", "-c", "[ -n \"$DATABASE_URL$DATABASE_URL_FILE\" ] || export DATABASE_URL=sqlite:////data/scalecost.db; scalecost db upgrade && scalecost catalog seed && exec gunicorn -c service/gunicorn_conf.py 'scalecost:create_app()'"]
