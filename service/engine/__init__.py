"""Pure estimator engine: dataclasses and functions, no Flask, SQLAlchemy or I/O."""
