"""Dense embeddings: Bedrock Titan and Cohere request shapes, the OpenAI-compatible endpoint, hybrid ranking, the
fallback to BM25 when embedding fails, and ask() reporting its retrieval mode."""

from __future__ import annotations

import io
import json
import logging
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber
from test_fragments import make_job

from insightloom.ask import embeddings
from insightloom.ask.answer import ask
from insightloom.ask.embeddings import BedrockEmbedder, HybridRetriever, OpenAIEmbedder, make_embedder
from insightloom.ask.events import read_ask_events
from insightloom.ask.fragments import KnowledgeFragment
from insightloom.ask.retrieval import Retriever
from insightloom.config import Settings, load_settings
from insightloom.errors import ConfigError

TITAN = "amazon.titan-embed-text-v2:0"
COHERE = "cohere.embed-multilingual-v3"


class JsonBody:
    """Equal to a request body whose JSON is ``expected`` (key order aside)."""

    def __init__(self, expected: Any) -> None:
        self.expected = expected

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str | bytes) and json.loads(other) == self.expected

    def __repr__(self) -> str:
        return f"JsonBody({self.expected!r})"


def bedrock_client() -> Any:
    return boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")


def reply(payload: dict[str, Any]) -> dict[str, Any]:
    data = json.dumps(payload).encode()
    return {"body": StreamingBody(io.BytesIO(data), len(data)), "contentType": "application/json"}


def expect(stub: Stubber, model_id: str, body: dict[str, Any], payload: dict[str, Any]) -> None:
    params = {"modelId": model_id, "body": JsonBody(body), "contentType": "application/json"}
    stub.add_response("invoke_model", reply(payload), {**params, "accept": "application/json"})


def test_titan_embeds_one_text_per_call() -> None:
    client = bedrock_client()
    with Stubber(client) as stub:
        expect(stub, TITAN, {"inputText": "West leads"}, {"embedding": [0.1, 0.2], "inputTextTokenCount": 2})
        expect(stub, TITAN, {"inputText": "East follows"}, {"embedding": [0.3, 0.4], "inputTextTokenCount": 2})
        expect(stub, TITAN, {"inputText": "who leads?"}, {"embedding": [0.5, 0.6], "inputTextTokenCount": 2})
        embedder = BedrockEmbedder(client=client)
        assert embedder.model_id == TITAN
        assert embedder.embed(["West leads", "East follows"]) == [[0.1, 0.2], [0.3, 0.4]]
        assert embedder.embed_query("who leads?") == [0.5, 0.6]
        stub.assert_no_pending_responses()


def test_cohere_embeds_documents_and_queries_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "COHERE_BATCH", 2)
    client = bedrock_client()
    documents = {"input_type": "search_document", "truncate": "END"}
    with Stubber(client) as stub:
        expect(stub, COHERE, {"texts": ["a", "b"], **documents}, {"embeddings": [[1.0, 0.0], [0.0, 1.0]]})
        expect(stub, COHERE, {"texts": ["c"], **documents}, {"embeddings": [[0.5, 0.5]]})
        query = {"texts": ["q"], "input_type": "search_query", "truncate": "END"}
        expect(stub, COHERE, query, {"embeddings": {"float": [[0.2, 0.8]]}})  # Embed v4's typed reply
        embedder = BedrockEmbedder(COHERE, client=client)
        assert embedder.embed(["a", "b", "c"]) == [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]
        assert embedder.embed_query("q") == [0.2, 0.8]
        stub.assert_no_pending_responses()


Responder = Callable[[dict[str, Any]], tuple[int, dict[str, Any]]]


class Endpoint:
    """A loopback OpenAI-compatible ``/v1/embeddings``: keeps every request, answers with ``respond``."""

    def __init__(self, respond: Responder) -> None:
        self.respond = respond
        self.requests: list[dict[str, Any]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.requests.append({"path": self.path, "headers": dict(self.headers), "json": body})
                status, payload = endpoint.respond(body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Responder], Endpoint]]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)  # loopback must not go through a proxy
    started: list[Endpoint] = []

    def start(respond: Responder) -> Endpoint:
        endpoint = Endpoint(respond)
        threading.Thread(target=endpoint.server.serve_forever, daemon=True).start()
        started.append(endpoint)
        return endpoint

    yield start
    for endpoint in started:
        endpoint.server.shutdown()
        endpoint.server.server_close()


KEYS = ("revenue", "west", "margin")


def keyword_vectors(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Vectors from keyword presence, listed in reverse order (the spec lets ``index`` say where each goes)."""
    texts = body["input"]
    data = [
        {"object": "embedding", "index": i, "embedding": [float(k in t.lower()) for k in KEYS] + [0.1]}
        for i, t in enumerate(texts)
    ]
    return 200, {"object": "list", "data": data[::-1], "model": body["model"]}


def test_openai_compatible_request_and_auth_header(serve: Callable[[Responder], Endpoint]) -> None:
    endpoint = serve(keyword_vectors)
    embedder = OpenAIEmbedder("text-embedding-3-small", base_url=endpoint.url + "/", api_key="sk-test")
    vectors = embedder.embed(["Revenue in the West", "Margin"])
    assert vectors == [[1.0, 1.0, 0.0, 0.1], [0.0, 0.0, 1.0, 0.1]]
    (request,) = endpoint.requests
    assert request["path"] == "/v1/embeddings"
    assert request["json"] == {"model": "text-embedding-3-small", "input": ["Revenue in the West", "Margin"]}
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    OpenAIEmbedder("local", base_url=endpoint.url).embed(["x"])
    assert "Authorization" not in endpoint.requests[1]["headers"]


def fragment(fid: str, text: str) -> KnowledgeFragment:
    return KnowledgeFragment(id=fid, text=text, job_id="job-a", source="results", section="s", date="2025-01-01")


CORPUS = [
    fragment("F1", "Revenue in the West region: the West leads all regions."),
    fragment("F2", "Revenue by channel: online orders bring most revenue."),
    fragment("F3", "The margin held steady over the year."),
]
QUERY = "revenue in the West"


class MappedEmbedder:
    """Vectors chosen per text: this one holds F2 (and the query) alike, whatever the words say."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(texts)
        return [[1.0, 0.0] if ("channel" in t or t == QUERY) else [0.0, 1.0] for t in texts]


def test_an_embedder_that_prefers_another_fragment_changes_the_ranking() -> None:
    assert Retriever(CORPUS).search(QUERY)[0].fragment.id == "F1"
    retriever = HybridRetriever(CORPUS, embedder=MappedEmbedder(), alpha=0.8)
    hits = retriever.search(QUERY)
    assert retriever.mode == "hybrid" and [h.fragment.id for h in hits[:2]] == ["F2", "F1"]
    assert hits[0].dense == pytest.approx(1.0) and hits[0].score == pytest.approx(0.8 + 0.2 * hits[0].bm25)


def test_document_vectors_are_cached_per_embedder_and_text() -> None:
    class Named(MappedEmbedder):
        name = "test:cached-embedder"

    first, second = Named(), Named()
    HybridRetriever(CORPUS, embedder=first).search(QUERY)
    HybridRetriever(CORPUS, embedder=second).search(QUERY)
    assert first.calls == [[f.text for f in CORPUS], [QUERY]]
    assert second.calls == [[QUERY]]  # the fragments came from the cache


class Failing:
    def embed(self, texts: list[str]) -> list[list[float]]:
        raise ConnectionError("endpoint down")


class Ragged:
    def embed(self, texts: list[str]) -> list[list[float]]:
        return [[1.0] * (i + 1) for i, _ in enumerate(texts)]


@pytest.mark.parametrize("embedder", [Failing(), Ragged()], ids=["raises", "ragged"])
def test_an_embedder_failure_falls_back_to_bm25(embedder: Any, caplog: pytest.LogCaptureFixture) -> None:
    retriever = HybridRetriever(CORPUS, embedder=embedder)
    assert retriever.mode == "hybrid"
    with caplog.at_level(logging.WARNING, logger="insightloom.ask.embeddings"):
        hits = retriever.search(QUERY)
    assert retriever.mode == "bm25" and "BM25 alone" in caplog.text
    assert hits == Retriever(CORPUS).search(QUERY) and all(h.dense is None for h in hits)


def test_bedrock_without_credentials_falls_back_to_bm25(caplog: pytest.LogCaptureFixture) -> None:
    retriever = HybridRetriever(CORPUS, embedder=BedrockEmbedder(region="us-east-1"))
    with caplog.at_level(logging.WARNING, logger="insightloom.ask.embeddings"):
        hits = retriever.search(QUERY)
    assert retriever.mode == "bm25" and "NoCredentialsError" in caplog.text and hits[0].fragment.id == "F1"


def test_make_embedder_follows_the_settings() -> None:
    assert make_embedder(Settings()) is None  # the offline default: BM25 alone
    bedrock = make_embedder(Settings(ask_embedder=f"bedrock:{COHERE}"))
    assert isinstance(bedrock, BedrockEmbedder) and bedrock.model_id == COHERE and bedrock.cohere
    openai = make_embedder(Settings(ask_embedder="openai:text-embedding-3-small"))
    assert isinstance(openai, OpenAIEmbedder) and openai.url == "https://api.openai.com/v1/embeddings"
    local = make_embedder(Settings(ask_embedder="openai:nomic", ask_embedder_url="http://127.0.0.1:11434/v1"))
    assert isinstance(local, OpenAIEmbedder) and local.url == "http://127.0.0.1:11434/v1/embeddings"


BAD_CONFIGS = (
    "ask_alpha: 1.5",
    "ask_alpha: yes",
    "ask_embedder: cohere:embed",
    "ask_embedder: 'bedrock:'",
    "ask_embedder: 3",
)


def test_settings_read_the_embedder_and_check_alpha(tmp_path: Path) -> None:
    env = {"INSIGHTLOOM_ASK_EMBEDDER": f"bedrock:{TITAN}", "INSIGHTLOOM_ASK_EMBEDDER_URL": "http://127.0.0.1:1/v1"}
    settings = load_settings(env=env, cwd=tmp_path)
    assert (settings.ask_embedder, settings.ask_embedder_url, settings.ask_alpha) == (
        f"bedrock:{TITAN}",
        "http://127.0.0.1:1/v1",
        0.5,
    )
    config = tmp_path / "insightloom.yaml"
    config.write_text("ask_alpha: 0.7\nask_embedder: openai:text-embedding-3-small\n", encoding="utf-8")
    assert load_settings(env={}, cwd=tmp_path).ask_alpha == 0.7
    for bad in BAD_CONFIGS:
        config.write_text(bad + "\n", encoding="utf-8")
        with pytest.raises(ConfigError) as err:
            load_settings(env={}, cwd=tmp_path)
        assert err.value.fix.startswith("e.g. ask_")
    with pytest.raises(ConfigError):
        load_settings(env={"INSIGHTLOOM_ASK_EMBEDDER": "titan"}, cwd=tmp_path / "none")


@pytest.fixture
def offline(tmp_path: Path) -> Settings:
    settings = Settings().with_provider("offline")
    settings.artifacts = tmp_path
    return settings


def test_ask_reports_hybrid_retrieval_with_a_working_embedder(
    tmp_path: Path, offline: Settings, serve: Callable[[Responder], Endpoint]
) -> None:
    job = make_job(tmp_path / "job")
    endpoint = serve(keyword_vectors)
    offline.ask_embedder, offline.ask_embedder_url = "openai:test-embedder", endpoint.url
    result = ask([job], "What was total revenue?", settings=offline)
    assert result.retrieval == "hybrid" and not result.abstained and result.citations
    assert json.loads((job / "usage.json").read_text(encoding="utf-8"))["ask"]["retrieval"] == "hybrid"
    retrieved = next(e for e in read_ask_events(job) if e["kind"] == "retrieved")
    assert retrieved["data"]["mode"] == "hybrid"
    assert endpoint.requests[-1]["json"]["input"] == ["What was total revenue?"]


def test_ask_falls_back_to_bm25_when_the_endpoint_fails(
    tmp_path: Path, offline: Settings, serve: Callable[[Responder], Endpoint]
) -> None:
    job = make_job(tmp_path / "job")
    endpoint = serve(lambda body: (503, {"error": {"message": "overloaded"}}))
    offline.ask_embedder, offline.ask_embedder_url = "openai:test-embedder", endpoint.url
    result = ask([job], "What was total revenue?", settings=offline)
    assert endpoint.requests and result.retrieval == "bm25" and not result.abstained
    assert json.loads((job / "usage.json").read_text(encoding="utf-8"))["ask"]["retrieval"] == "bm25"
