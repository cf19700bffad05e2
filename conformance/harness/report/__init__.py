"""Views of a check run. ``model.build`` makes the JSON document (``kafka-conformance/check/2``);
``terminal``, ``junit``, ``html`` and ``markdown`` render that document, so a saved JSON
report can be rendered again (``kafka-conformance check --from-json``)."""
