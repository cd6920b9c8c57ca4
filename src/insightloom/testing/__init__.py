"""Test helpers shipped with insightloom, for the product's own tests and for plugin authors.

They use only the product's runtime dependencies, so a plugin can test against them without this repository.
``insightloom.testing.bedrock_endpoint`` is a strict, local stand-in for the Bedrock Runtime Converse API.
"""
