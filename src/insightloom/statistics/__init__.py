"""The one catalog of statistical operations, and questions read as requests for them.

- :mod:`.request`: what was asked, as data (operations, columns, filters, groups, parameters, output form);
- :mod:`.operations`: how each operation is computed (pandas and SciPy), checked (DuckDB SQL, or a recipe the
  Validator re-derives) and worded;
- :mod:`.parse`: a plain-language question (English or Korean) read into a request over a data profile;
- :mod:`.rounding`: the one rounding rule (half away from zero).
"""
