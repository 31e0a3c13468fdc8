"""Pure engine tests: no Flask, no database."""
