"""pb_to_json.py -- write graph.json next to a zoo model's graph.pb,
exactly as make_zoo.py writes it (json_format.MessageToJson, sort_keys),
without re-running TensorFlow (issue 22: models with a function library
had graph.pb only).

Usage: /work/main/tools/tf_fixtures/.venv/bin/python tools/zoo/pb_to_json.py
       tests/data/zoo/MODEL...
"""
import os
import sys

from google.protobuf import json_format
from tensorflow.core.framework import graph_pb2

for d in sys.argv[1:]:
    with open(os.path.join(d, "graph.pb"), "rb") as f:
        gd = graph_pb2.GraphDef.FromString(f.read())
    with open(os.path.join(d, "graph.json"), "w") as f:
        f.write(json_format.MessageToJson(gd, sort_keys=True))
        f.write("\n")
    print(d, len(gd.node), "nodes,", len(gd.library.function), "functions")
