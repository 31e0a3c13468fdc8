"""`scalecost estimate` and `scalecost plan`: bodies from flags, files or stdin; the local engine or --server."""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.request

import pytest
import scalecost
from click.testing import CliRunner
from scalecost.cli import main

FLAGS = [
    "--model",
    "llama-2-70b",
    "--tokens",
    "2T",
    "--accelerator",
    "nvidia-a100-sxm-80gb",
    "--count",
    "2048",
]
BODY = {
    "model": {"preset": "llama-2-70b"},
    "training": {"tokens": "2T", "global_batch_size": 1024, "sequence_length": 4096},
    "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 2048, "parallelism": "auto"},
}
INFERENCE = {"model": {"preset": "llama-3-8b"}, "hardware": {"accelerator": "nvidia-rtx-4090", "count": 1}}


def run(*args: str, env: dict[str, str] | None = None, stdin: str | None = None):
    return CliRunner().invoke(main, list(args), env={"LANG": "C.UTF-8", **(env or {})}, input=stdin)


def test_flags_build_the_common_body_and_json_is_the_apis_answer():
    result = run("estimate", "training", *FLAGS, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == scalecost.estimate_training(BODY).to_dict()


def test_the_summary_speaks_langs_language():
    english = run("estimate", "training", *FLAGS)
    assert english.exit_code == 0, english.output
    estimate = scalecost.estimate_training(BODY)
    assert estimate.human["time"] in english.output and estimate.human["cost"] in english.output
    spanish = run("estimate", "training", *FLAGS, env={"LANG": "es_ES.UTF-8"})
    in_spanish = scalecost.estimate_training(BODY, language="es")
    assert in_spanish.human["time"] in spanish.output and in_spanish.human["cost"] in spanish.output
    assert in_spanish.human["cost"] != estimate.human["cost"]
    assert estimate.intervals is not None and estimate.intervals["human"]["time"] in english.output
    assert estimate.interval_basis is not None and estimate.interval_basis["points"] >= 8


def test_invalid_input_is_one_line_naming_the_fields_and_exit_2():
    result = run("estimate", "training", *FLAGS[:-1], "0")
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "Error: invalid request: hardware.count: Must be greater than or equal to 1 and less than or equal to 1000000."
    ]
    impossible = run("estimate", "training", *FLAGS, "--accelerator", "nope")
    assert impossible.exit_code == 2 and "hardware.accelerator: Unknown accelerator" in impossible.output
    assert run("estimate", "inference", "--body", "-", stdin="{not json").exit_code == 2


def test_a_body_from_stdin_with_flags_set_on_it():
    result = run(
        "estimate", "inference", "--body", "-", "--count", "2", "--json", stdin=json.dumps(INFERENCE)
    )
    assert result.exit_code == 0, result.output
    body = {**INFERENCE, "hardware": {"accelerator": "nvidia-rtx-4090", "count": 2}}
    assert json.loads(result.output) == scalecost.estimate_inference(body).to_dict()
    assert "end to end" in run("estimate", "inference", "--body", "-", stdin=json.dumps(INFERENCE)).output


def test_a_body_file_and_the_database_url(tmp_path, migrated_url, app):
    path = tmp_path / "body.json"
    path.write_text(json.dumps(BODY))
    result = run("estimate", "training", "--body", str(path), "--database-url", migrated_url, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == scalecost.estimate_training(BODY).to_dict()


@pytest.fixture
def server(client, monkeypatch):
    """--server's urllib requests answered by the app's test client."""
    sent = []

    def urlopen(request, timeout=None):
        path = request.full_url.removeprefix("http://scalecost.test")
        headers = dict(request.header_items())
        sent.append((path, headers))
        answer = client.post(path, data=request.data, headers=headers)
        if answer.status_code >= 400:
            raise urllib.error.HTTPError(
                request.full_url, answer.status_code, "", answer.headers, io.BytesIO(answer.data)
            )
        return io.BytesIO(answer.data)

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    return sent


def test_server_asks_the_running_service(server):
    result = run(
        "estimate",
        "inference",
        "--body",
        "-",
        "--server",
        "http://scalecost.test/",
        "--json",
        stdin=json.dumps(INFERENCE),
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == scalecost.estimate_inference(INFERENCE).to_dict()
    assert server[0][0] == "/v1/estimates/inference"
    refused = run(
        "estimate", "training", *FLAGS[:-1], "0", "--server", "http://scalecost.test", env={"LANG": "fr_FR"}
    )
    assert refused.exit_code == 2 and "hardware.count: Doit" in refused.output, refused.output
    assert server[1][1]["Accept-language"] == "fr"


def test_plan_serving_summary_and_json():
    flags = [
        "--model",
        "llama-3-70b",
        "--requests-per-second",
        "5",
        "--prompt-tokens",
        "512",
        "--output-tokens",
        "256",
    ]
    flags += ["--ttft", "1", "--tpot", "0.05", "--accelerator", "nvidia-h100-sxm-80gb"]
    result = run("plan", "serving", *flags, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["feasible"] is True
    summary = run("plan", "serving", *flags)
    assert summary.output.startswith("nvidia-h100-sxm-80gb × ") and "latency:" in summary.output


def test_the_help_documents_the_exit_codes():
    for command in (
        ["estimate", "training"],
        ["estimate", "inference"],
        ["plan", "training"],
        ["plan", "serving"],
    ):
        assert "Exit codes: 0 answered" in run(*command, "--help").output


# The labels each language's catalog gives (service/translations), and how its locale writes US dollars.
LABELS = {
    "es_ES.UTF-8": (["tiempo:", "coste:", "horas-acelerador:", "memoria por dispositivo:"], "\xa0US$"),
    "pt_BR.UTF-8": (["tempo:", "custo:", "horas-acelerador:", "memória por dispositivo:"], "US$\xa0"),
    "fr_FR.UTF-8": (["durée:", "coût:", "heures-accélérateur:", "mémoire par appareil:"], "\xa0$US"),
    "C.UTF-8": (["time:", "cost:", "accelerator-hours:", "memory per device:"], "$"),
}
TAGS = {"es_ES.UTF-8": "es", "pt_BR.UTF-8": "pt-BR", "fr_FR.UTF-8": "fr", "C.UTF-8": "en"}


@pytest.mark.parametrize("lang", sorted(LABELS))
def test_the_training_summary_labels_come_from_langs_catalog(lang):
    """Issue 32: the summary's labels go through the same gettext catalogs as the API, the values are the
    answer's human strings in that language (numbers and money by its locale), aligned after the longest label."""
    labels, dollars = LABELS[lang]
    result = run("estimate", "training", *FLAGS, env={"LANG": lang})
    assert result.exit_code == 0, result.output
    rows = result.output.splitlines()[1 : 1 + len(labels)]
    assert [row.split(":")[0].strip() + ":" for row in rows] == labels, rows
    answer = scalecost.estimate_training(BODY, language=TAGS[lang])
    assert rows[0].endswith(answer.human["time"]) and rows[1].endswith(answer.human["cost"])
    assert dollars in answer.human["cost"]
    assert len({len(row) - len(row.split(":", 1)[1].lstrip()) for row in rows}) == 1, rows  # one column


@pytest.mark.parametrize(
    "lang, words",
    [
        ("es_ES.UTF-8", ["de extremo a extremo:", "primer token:", "coste por hora:", "0,"]),
        ("pt_BR.UTF-8", ["de ponta a ponta:", "primeiro token:", "custo por hora:", "US$\xa00,"]),
        ("fr_FR.UTF-8", ["de bout en bout:", "premier token:", "coût par heure:", "$US"]),
    ],
)
def test_the_inference_summary_speaks_langs_language(lang, words):
    result = run("estimate", "inference", "--body", "-", env={"LANG": lang}, stdin=json.dumps(INFERENCE))
    assert result.exit_code == 0, result.output
    assert all(word in result.output for word in words), result.output
    assert "end to end" not in result.output


def test_plan_summaries_and_refusals_in_langs_language():
    nothing = ["plan", "training", "--model", "llama-2-7b", "--tokens", "200B", "--deadline", "PT1H"]
    nothing += ["--accelerator", "nvidia-h100-sxm-80gb"]
    result = run(*nothing, env={"LANG": "pt_BR.UTF-8"})
    assert result.exit_code == 0, result.output
    assert result.output.startswith("nenhum plano se qualifica\n  O plano mais rápido"), result.output
    serving = ["plan", "serving", "--model", "llama-3-70b", "--requests-per-second", "5", "--ttft", "1"]
    serving += ["--tpot", "0.05", "--accelerator", "nvidia-h100-sxm-80gb"]
    spanish = run(*serving, env={"LANG": "es_ES.UTF-8"}).output
    assert "réplicas (" in spanish and "latencia:" in spanish and "por millón de tokens de salida:" in spanish
    refused = run("estimate", "training", *FLAGS[:-1], "0", env={"LANG": "fr_FR.UTF-8"})
    assert refused.exit_code == 2 and "requête invalide: hardware.count: Doit" in refused.output
