"""Runs lifecycle steps (lifecycle.json) against `quarry serve --grpc-port` through stubs compiled
from the shipped protos with Debian's protoc and grpc_python_plugin (gRPC's C core, not grpc-js).

Usage: /usr/bin/python3 lifecycle.py TARGET STEPS_JSON PREFIX
Prints one JSON line: each step's answer (proto3 JSON, as json_format writes it) or its status code.
"""
import importlib
import json
import re
import sys

import grpc
from google.protobuf import json_format, symbol_database


def module_of(service):
    """google.cloud.aiplatform.v1.VertexRagDataService -> the generated modules of vertex_rag_data_service.proto, and the name"""
    package, name = service.rsplit('.', 1)
    snake = re.sub(r'([a-z0-9])([A-Z])', r'\1_\2', re.sub(r'([A-Z]+)([A-Z][a-z])', r'\1_\2', name)).lower()
    return importlib.import_module(f'{package}.{snake}_pb2_grpc'), importlib.import_module(f'{package}.{snake}_pb2'), name


def substitute(value, names):
    if isinstance(value, str):
        return re.sub(r'\{\{(\w+)\}\}', lambda m: names[m.group(1)], value)
    if isinstance(value, list):
        return [substitute(v, names) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, names) for k, v in value.items()}
    return value


def at(value, path):
    for key in path.split('.'):
        value = value[key]
    return value


def main():
    target, steps_file, prefix = sys.argv[1:4]
    with open(steps_file) as f:
        steps = json.load(f)['steps']
    channel = grpc.insecure_channel(target)
    names = {'prefix': prefix}
    answers = []
    for step in steps:
        grpc_module, messages, name = module_of(step['service'])
        method = getattr(getattr(grpc_module, f'{name}Stub')(channel), step['rpc'])
        input_type = messages.DESCRIPTOR.services_by_name[name].methods_by_name[step['rpc']].input_type
        request_type = symbol_database.Default().GetSymbol(input_type.full_name)
        request = substitute(step['request'], names)
        try:
            response = method(json_format.ParseDict(request, request_type()))
        except grpc.RpcError as error:
            answers.append({'code': error.code().value[0]})
            continue
        answer = json_format.MessageToDict(response)
        for var, path in step.get('save', {}).items():
            names[var] = at(answer, path)
        answers.append(answer)
    print(json.dumps({'answers': answers, 'names': names}))


main()
