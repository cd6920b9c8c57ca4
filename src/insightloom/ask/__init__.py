"""Follow-up questions about finished jobs: the knowledge base, retrieval, selection, prompt, memory and answer.

Submodules are imported on use (``from insightloom.ask.fragments import load_knowledge``), so importing the package
costs nothing and pulls in no retrieval library.
"""
