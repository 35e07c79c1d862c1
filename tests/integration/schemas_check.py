#!/usr/bin/python3
"""Checks records newsflow wrote against the JSON Schemas in deploy/schemas (python3-jsonschema).

    schemas_check.py SCHEMA_DIR replay ARTICLES.jsonl DLQ.jsonl [STORIES.jsonl]
    schemas_check.py SCHEMA_DIR kafka ARTICLES.kcat STORIES.kcat DLQ.kcat
    schemas_check.py SCHEMA_DIR extracted EXTRACTED.kcat

`kafka` files are `kcat -J` output: every record's value against its schema and its `schema`
header (a feed item's dead letter, keyed by its link, has a JSON value of its own; other dead
letters keep the input's bytes).
"""
import json
import re
import sys

from jsonschema import Draft202012Validator


def load(schema_dir, name):
    schema = json.load(open(f"{schema_dir}/{name}.schema.json", encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def check(validator, obj, where, errors):
    for e in validator.iter_errors(obj):
        errors.append(f"{where}: {e.message} at {list(e.absolute_path)}")


def headers_of(record):
    h = record.get("headers") or []
    return {h[i]: h[i + 1] for i in range(0, len(h), 2)}


def main():
    schema_dir, mode, *files = sys.argv[1:]
    errors, counts = [], {}
    article = load(schema_dir, "article")
    if mode == "replay":
        dlq = load(schema_dir, "replay-dead-letter")
        checked = [(files[0], article), (files[1], dlq)]
        if len(files) > 2:  # replay --stories
            checked.append((files[2], load(schema_dir, "story")))
        for path, validator in checked:
            for n, line in enumerate(open(path, encoding="utf-8"), 1):
                check(validator, json.loads(line), f"{path}:{n}", errors)
                counts[path] = n
    elif mode == "extracted":
        extracted = load(schema_dir, "extracted")
        n = 0
        marks = 0
        for n, line in enumerate(open(files[0], encoding="utf-8", errors="replace"), 1):
            record = json.loads(line, strict=False)
            h = headers_of(record)
            if h.get("schema") == "newsflow.watermark/1":
                # An extractor's watermark: header `watermark` (Unix seconds or "end"), no value.
                marks += 1
                if not re.fullmatch(r"-?[0-9]+|end", h.get("watermark") or "") or record.get(
                        "payload"):
                    errors.append(f"{files[0]}:{n}: a malformed watermark record")
                continue
            if h.get("schema") != "newsflow.extracted/1":
                errors.append(f"{files[0]}:{n}: no schema header newsflow.extracted/1")
            check(extracted, json.loads(record["payload"]), f"{files[0]}:{n}", errors)
        counts[files[0]] = n - marks
        counts["watermark records"] = marks
    else:
        story = load(schema_dir, "story")
        headers = load(schema_dir, "dead-letter-headers")
        item = load(schema_dir, "dead-letter-item")
        retry = load(schema_dir, "fetch-retry")
        expect = {files[0]: ("newsflow.article/1", article), files[1]: ("newsflow.story/1", story),
                  files[2]: ("newsflow.dead-letter/1", None)}
        for path, (name, validator) in expect.items():
            n = 0
            # kcat writes a dead letter's bytes as they are: binary junk is no UTF-8.
            for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                record = json.loads(line, strict=False)
                h = headers_of(record)
                where = f"{path}:{n}"
                if h.get("schema") != name:
                    errors.append(f"{where}: header schema is {h.get('schema')!r}, not {name!r}")
                if validator is not None:
                    if record.get("payload") is not None:  # a tombstone has no value
                        check(validator, json.loads(record["payload"]), where, errors)
                    continue
                check(headers, h, where + " headers", errors)
                if h.get("error_reason", "").startswith("fetch_"):
                    value = json.loads(record["payload"])
                    # Given up after later tries: the retry record; else the item's.
                    check(retry if "attempts" in value else item, value, where, errors)
            counts[path] = n
    for e in errors[:20]:
        print("FAIL:", e)
    summary = ", ".join(f"{n} in {p.rsplit('/', 1)[-1]}" for p, n in counts.items())
    if errors:
        sys.exit(f"{len(errors)} schema violations ({summary})")
    if any(n == 0 for n in counts.values()):
        sys.exit(f"nothing to check in some file ({summary})")
    print(f"schemas hold: {summary}")


if __name__ == "__main__":
    main()
