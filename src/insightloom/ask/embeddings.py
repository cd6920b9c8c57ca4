"""Dense embeddings for hybrid retrieval: Amazon Bedrock (Titan, Cohere) and OpenAI-compatible endpoints.

``make_embedder`` builds one from ``Settings.ask_embedder`` (``bedrock:MODEL_ID`` or ``openai:MODEL``); None, the
offline default, keeps retrieval BM25 alone. ``HybridRetriever`` is the ``Retriever`` answers use: when the embedder
fails (no credentials, the endpoint down, a malformed reply) it logs a warning and retrieves with BM25 alone from
then on, so its ``mode``, which the answer and usage.json record, says ``bm25``.

Fragments are embedded as documents and questions as queries (Cohere's ``input_type``). Document vectors are kept in
a small process-wide cache: a Retriever is built per question, and Titan embeds one text per call.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import httpx

from ..errors import ModelError
from .fragments import KnowledgeFragment
from .retrieval import Embedder, Hit, Retriever

if TYPE_CHECKING:
    from ..config import Settings

logger = logging.getLogger(__name__)

__all__ = ["BedrockEmbedder", "HybridRetriever", "OpenAIEmbedder", "make_embedder"]

TITAN_V2 = "amazon.titan-embed-text-v2:0"
OPENAI_URL = "https://api.openai.com/v1"
#: An embedding call that takes longer than this is a provider that is down: BM25 answers instead.
TIMEOUT_S = 30.0
#: Cohere on Bedrock takes at most 96 texts of at most 2,048 characters per call (longer ones are truncated).
COHERE_BATCH = 96
OPENAI_BATCH = 256
_CACHE_SIZE = 10_000

Vectors = list[list[float]]


def _vectors(raw: Any, count: int, provider: str) -> Vectors:
    """``raw`` as ``count`` non-empty numeric vectors; a ModelError for anything else."""
    if not isinstance(raw, list) or len(raw) != count:
        raise ModelError(f"{provider} returned {len(raw) if isinstance(raw, list) else 'no'} embeddings for {count}.")
    try:
        vectors = [[float(x) for x in vector] for vector in raw]
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{provider} returned an embedding that is not a list of numbers.") from exc
    if any(not vector for vector in vectors):
        raise ModelError(f"{provider} returned an empty embedding.")
    return vectors


class BedrockEmbedder:
    """Embeddings from Amazon Bedrock ``InvokeModel``: Titan Text Embeddings, or Cohere Embed (``cohere.embed-*``).

    Args:
        model_id: The model id or inference profile: ``amazon.titan-embed-text-v2:0``, ``cohere.embed-*``...
        client: A ``bedrock-runtime`` client; by default one for ``region`` with a short timeout.
        region: The AWS region; by default ``AWS_REGION``, ``AWS_DEFAULT_REGION``, then the product's default.
    """

    def __init__(self, model_id: str = TITAN_V2, *, client: Any = None, region: str | None = None) -> None:
        self.model_id = model_id
        self.name = f"bedrock:{model_id}"
        self.cohere = "cohere.embed" in model_id
        self.client = client if client is not None else _bedrock_client(region)

    def embed(self, texts: list[str]) -> Vectors:
        """Document vectors, one per text, in order."""
        return self._embed(texts, "search_document")

    def embed_query(self, text: str) -> list[float]:
        """A question's vector (Cohere embeds queries differently from documents)."""
        return self._embed([text], "search_query")[0]

    def _embed(self, texts: list[str], input_type: str) -> Vectors:
        if not self.cohere:  # Titan takes one text per call
            return [self._invoke({"inputText": text}, "embedding", 1)[0] for text in texts]
        vectors: Vectors = []
        for start in range(0, len(texts), COHERE_BATCH):
            batch = texts[start : start + COHERE_BATCH]
            body = {"texts": batch, "input_type": input_type, "truncate": "END"}
            vectors += self._invoke(body, "embeddings", len(batch))
        return vectors

    def _invoke(self, body: dict[str, Any], key: str, count: int) -> Vectors:
        response = self.client.invoke_model(
            modelId=self.model_id, body=json.dumps(body), contentType="application/json", accept="application/json"
        )
        payload = json.loads(response["body"].read())
        raw = payload.get(key) if isinstance(payload, dict) else None
        if isinstance(raw, dict):  # Cohere with embedding_types (Embed v4's default): {"float": [...]}
            raw = raw.get("float")
        return _vectors([raw] if key == "embedding" else raw, count, self.name)


def _bedrock_client(region: str | None) -> Any:
    import boto3
    from botocore.config import Config

    from ..models.bedrock import DEFAULT_REGION

    region = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION
    config = Config(read_timeout=TIMEOUT_S, connect_timeout=5, retries={"max_attempts": 2, "mode": "standard"})
    return boto3.client("bedrock-runtime", region_name=region, config=config)


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible ``POST {base_url}/embeddings`` (OpenAI, vLLM, Ollama, LiteLLM...).

    Args:
        model: The endpoint's model name (``text-embedding-3-small``).
        base_url: The API's base URL, up to and including ``/v1``.
        api_key: Sent as a bearer token; None sends no ``Authorization`` header (local servers).
    """

    def __init__(self, model: str, *, base_url: str, api_key: str | None = None) -> None:
        self.model = model
        self.url = base_url.rstrip("/") + "/embeddings"
        self.name = f"openai:{model}@{base_url}"
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def embed(self, texts: list[str]) -> Vectors:
        """One vector per text, in order."""
        vectors: Vectors = []
        for start in range(0, len(texts), OPENAI_BATCH):
            vectors += self._post(texts[start : start + OPENAI_BATCH])
        return vectors

    def _post(self, batch: list[str]) -> Vectors:
        response = httpx.post(
            self.url, json={"model": self.model, "input": batch}, headers=self.headers, timeout=TIMEOUT_S
        )
        response.raise_for_status()
        data = response.json().get("data")
        if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
            raise ModelError(f"{self.url} returned no 'data' list of embeddings.")
        ordered = sorted(data, key=lambda item: item.get("index", 0))  # the spec allows any order
        return _vectors([item.get("embedding") for item in ordered], len(batch), self.url)


def make_embedder(settings: Settings) -> Embedder | None:
    """The embedder ``settings.ask_embedder`` names, or None (BM25 alone) when it names none or cannot be built."""
    if not settings.ask_embedder:
        return None
    provider, _, model = settings.ask_embedder.partition(":")
    try:
        if provider == "bedrock":
            return BedrockEmbedder(model)
        return OpenAIEmbedder(
            model, base_url=settings.ask_embedder_url or OPENAI_URL, api_key=os.environ.get("OPENAI_API_KEY")
        )
    except Exception as exc:  # a missing SDK piece or bad region must not stop an answer: BM25 still works
        logger.warning("Cannot build the %s embedder (%s); retrieving with BM25 alone", settings.ask_embedder, exc)
        return None


class _DocumentCache:
    """Document vectors by (embedder, text), least recently used out first; shared by the threads of a server."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._vectors: OrderedDict[tuple[str, str], list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> list[float] | None:
        with self._lock:
            vector = self._vectors.get(key)
            if vector is not None:
                self._vectors.move_to_end(key)
            return vector

    def put(self, key: tuple[str, str], vector: list[float]) -> None:
        with self._lock:
            self._vectors[key] = vector
            self._vectors.move_to_end(key)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)


_CACHE = _DocumentCache(_CACHE_SIZE)


class _Guarded:
    """The embedder as the Retriever sees it: fragments embedded as documents (cached), anything else as a query,
    every failure or malformed reply a ModelError."""

    def __init__(self, embedder: Embedder, documents: list[str]) -> None:
        self.embedder = embedder
        self.documents = documents
        self.name: str | None = getattr(embedder, "name", None)
        self.dimensions: int | None = None

    def embed(self, texts: list[str]) -> Vectors:
        try:
            vectors = self._documents(texts) if texts == self.documents else self._queries(texts)
        except ModelError:
            raise
        except Exception as exc:  # no credentials, the endpoint down, a refused request: all mean "no dense"
            raise ModelError(f"{type(exc).__name__}: {exc}") from exc
        if len({len(v) for v in vectors} | ({self.dimensions} if self.dimensions else set())) > 1:
            raise ModelError("the embedder returned vectors of different sizes")
        self.dimensions = len(vectors[0]) if vectors else self.dimensions
        return vectors

    def _queries(self, texts: list[str]) -> Vectors:
        embed_query = getattr(self.embedder, "embed_query", None)
        if embed_query is None:
            return _vectors(self.embedder.embed(texts), len(texts), "the embedder")
        return _vectors([embed_query(text) for text in texts], len(texts), "the embedder")

    def _documents(self, texts: list[str]) -> Vectors:
        if self.name is None:
            return _vectors(self.embedder.embed(texts), len(texts), "the embedder")
        found = {text: _CACHE.get((self.name, text)) for text in dict.fromkeys(texts)}
        missing = [text for text, vector in found.items() if vector is None]
        if missing:
            fresh = _vectors(self.embedder.embed(missing), len(missing), self.name)
            for text, vector in zip(missing, fresh, strict=True):
                found[text] = vector
                _CACHE.put((self.name, text), vector)
        return [found[text] or [] for text in texts]


class HybridRetriever(Retriever):
    """A :class:`Retriever` that falls back to BM25 alone, with a warning, when its embedder fails.

    Args:
        fragments: The knowledge base.
        embedder: Dense embeddings; None is BM25 alone.
        alpha: The dense share of the hybrid score, 0..1.
    """

    def __init__(
        self, fragments: Sequence[KnowledgeFragment], *, embedder: Embedder | None = None, alpha: float = 0.5
    ) -> None:
        fragments = list(fragments)
        guarded = None if embedder is None else _Guarded(embedder, [f.text for f in fragments])
        super().__init__(fragments, embedder=guarded, alpha=alpha)

    def search(self, query: str, k: int = 20) -> list[Hit]:
        """The ``k`` best fragments for ``query``; BM25 alone from now on if the embedder fails."""
        try:
            return super().search(query, k)
        except ModelError as exc:
            logger.warning("Dense embeddings failed (%s); retrieving with BM25 alone", exc)
            self.embedder = None
            return super().search(query, k)
