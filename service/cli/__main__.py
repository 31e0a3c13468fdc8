"""`python -m scalecost.cli`: the same as the `scalecost` command."""

from . import main

main()
