"""Amazon Bedrock AgentCore Runtime entrypoint: a shim over :mod:`insightloom.service.agentcore`.

Build the ARM64 image from ``deploy/Dockerfile`` with ``EXTRA_PIP=bedrock-agentcore`` and
``CMD ["python", "deploy/agentcore_entrypoint.py"]`` (or ``python -m insightloom.service.agentcore``), with
``INSIGHTLOOM_ARTIFACTS=s3://bucket/prefix``. It binds 0.0.0.0:8080, as AgentCore Runtime requires inside its
microVM (AWS authenticates the callers); ``--host``/``--port`` change that for local tries. The actions and their
answers are described in the module's docstring; ``deploy/README.md`` covers the build and the IAM policy.
"""

from __future__ import annotations

from insightloom.service.agentcore import main

if __name__ == "__main__":
    raise SystemExit(main())
