"""options: the values every enumerated request field accepts (GET /v1/options)."""
