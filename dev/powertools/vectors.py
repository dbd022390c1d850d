#!/usr/bin/env python3
"""Test vectors for lambdaidem/powertools, computed with Python's standard
library the way Powertools for AWS Lambda (Python) computes them.

Powertools Python (aws_lambda_powertools/utilities/idempotency) hashes the
data its event_key_jmespath selects as

    getattr(hashlib, hash_function)(json.dumps(data, cls=Encoder, sort_keys=True).encode()).hexdigest()

(Encoder only adds Decimal, dataclass and pydantic support, which a JSON
event never holds), prefixes it with "<AWS_LAMBDA_FUNCTION_NAME or
'test-func'>.<module>.<qualname>" (or key_prefix) and "#", skips a selection
is_missing_idempotency_key calls missing, and stores a response as
json.dumps(response or None, sort_keys=True), replaying json.loads of it (or
None when falsy).

Usage: python3 dev/powertools/vectors.py < cases.json > python.json
(make powertools-vectors runs it.)
"""
import hashlib
import json
import sys


def is_missing(data):
    # Powertools' is_missing_idempotency_key.
    if isinstance(data, (tuple, list, dict)):
        return all(x is None for x in data)
    if isinstance(data, (int, float, bool)):
        return False
    return not data


def generate_hash(data, hash_function):
    return getattr(hashlib, hash_function)(json.dumps(data, sort_keys=True).encode()).hexdigest()


def main():
    cases = json.load(sys.stdin)
    keys = []
    for case in cases["keys"]:
        data = json.loads(case["selection"])
        hash_function = case.get("hash_function", "md5")
        prefix = case.get("key_prefix") or "{}.{}".format(case.get("function_name") or "test-func", case.get("handler", ""))
        out = {"name": case["name"], "canonical": json.dumps(data, sort_keys=True)}
        if is_missing(data):
            out["missing"] = True
        else:
            out["key"] = "{}#{}".format(prefix, generate_hash(data, hash_function))
        out["validation"] = generate_hash(data, hash_function)
        keys.append(out)
    outcomes = []
    for case in cases["outcomes"]:
        response = json.loads(case["outcome"])
        stored = json.dumps(response if response else None, sort_keys=True)
        replay = json.loads(stored)
        outcomes.append({
            "name": case["name"],
            "data": {"S": stored},
            "replay": json.dumps(replay if replay else None, sort_keys=True),
        })
    json.dump({"generator": "dev/powertools/vectors.py", "python": sys.version.split()[0], "keys": keys, "outcomes": outcomes}, sys.stdout, indent=1, ensure_ascii=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
