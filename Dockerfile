FROM python:3.11-slim
WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
# gunicorn binds HOST:PORT (service/gunicorn_conf.py, 127.0.0.1 by default): all interfaces inside a container
ENV HOST=0.0.0.0 PORT=8000
COPY pyproject.toml README.md alembic.ini ./
COPY service ./service
COPY migrations ./migrations
RUN pip install --no-cache-dir -e .
EXPOSE 8000
# Migrate (idempotent), seed (never overwrites admin changes), then serve.
CMD ["sh", "-c", "scalecost db upgrade && scalecost catalog seed && exec gunicorn -c service/gunicorn_conf.py 'scalecost:create_app()'"]
