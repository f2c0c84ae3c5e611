"""OTLP in and out: decoding exports into domain spans, encoding spans (the receivers serving it are in server/)."""

from coordbench.otlp.codecs import CODECS, encoded_span
from coordbench.otlp.decode import OTLP_PROTOBUF, decode_protobuf, decode_request
from coordbench.otlp.encode import export_request, export_request_json, span_message
from coordbench.otlp.jsondecode import OTLP_JSON, OTLP_JSON_TEXT, decode_json
from coordbench.otlp.model import DecodeResult, OtlpDecodeError

__all__ = [
    "CODECS",
    "OTLP_JSON",
    "OTLP_JSON_TEXT",
    "OTLP_PROTOBUF",
    "DecodeResult",
    "OtlpDecodeError",
    "decode_json",
    "decode_protobuf",
    "decode_request",
    "encoded_span",
    "export_request",
    "export_request_json",
    "span_message",
]
