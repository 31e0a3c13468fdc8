"""HTTP layer: flask-smorest blueprints, marshmallow schemas, auth and problem+json errors."""
