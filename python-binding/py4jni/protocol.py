"""py4j's ``protocol`` module: its constants, encoding helpers, converters and errors.

py4jni does not speak this text protocol from Python (C does, in socket mode), but py4j
programs and libraries use these names: the type and command constants (py4j's values),
``get_command_part`` / ``get_return_value`` (the latter is the hook every failed call
passes through: replace ``py4jni.java_gateway.get_return_value`` (or this module's) to
turn Java exceptions into your own), and the converter registries
``INPUT_CONVERTER`` / ``OUTPUT_CONVERTER``.
"""
from __future__ import absolute_import, annotations, unicode_literals

import sys

TYPE_CHECKING = False  # typing's constant without importing typing (~5 ms)
if TYPE_CHECKING:
    from typing import Any, Callable

from .compat import (basestring, bytearray2, bytestr, bytetoint, bytetostr,  # noqa: F401
                     isbytearray, isbytestr, ispython3bytestr, long, strtobyte, unicode)

# py4j's protocol constants (same values: they name py4j's wire format)
JAVA_MAX_INT = 2147483647
JAVA_MIN_INT = -2147483648
JAVA_INFINITY = 'Infinity'
JAVA_NEGATIVE_INFINITY = '-Infinity'
JAVA_NAN = 'NaN'
ESCAPE_CHAR = '\\'
ENTRY_POINT_OBJECT_ID = 't'
CONNECTION_PROPERTY_OBJECT_ID = 'c'
GATEWAY_SERVER_OBJECT_ID = 'GATEWAY_SERVER'
STATIC_PREFIX = 'z:'
DEFAULT_JVM_ID = 'rj'
DEFAULT_JVM_NAME = 'default'
BYTES_TYPE = 'j'
INTEGER_TYPE = 'i'
LONG_TYPE = 'L'
BOOLEAN_TYPE = 'b'
DOUBLE_TYPE = 'd'
DECIMAL_TYPE = 'D'
STRING_TYPE = 's'
REFERENCE_TYPE = 'r'
ARRAY_TYPE = 't'
SET_TYPE = 'h'
LIST_TYPE = 'l'
MAP_TYPE = 'a'
NULL_TYPE = 'n'
PACKAGE_TYPE = 'p'
CLASS_TYPE = 'c'
METHOD_TYPE = 'm'
NO_MEMBER = 'o'
VOID_TYPE = 'v'
ITERATOR_TYPE = 'g'
PYTHON_PROXY_TYPE = 'f'
END = 'e'
ERROR = 'x'
FATAL_ERROR = 'z'
SUCCESS = 'y'
RETURN_MESSAGE = '!'
SUCCESS_PACKAGE = 'yp'
SUCCESS_CLASS = 'yc'
CLASS_FQN_START = 2
END_COMMAND_PART = 'e\n'
NO_MEMBER_COMMAND = 'yo'
CALL_COMMAND_NAME = 'c\n'
FIELD_COMMAND_NAME = 'f\n'
CONSTRUCTOR_COMMAND_NAME = 'i\n'
SHUTDOWN_GATEWAY_COMMAND_NAME = 's\n'
LIST_COMMAND_NAME = 'l\n'
REFLECTION_COMMAND_NAME = 'r\n'
MEMORY_COMMAND_NAME = 'm\n'
HELP_COMMAND_NAME = 'h\n'
ARRAY_COMMAND_NAME = 'a\n'
JVMVIEW_COMMAND_NAME = 'j\n'
EXCEPTION_COMMAND_NAME = 'p\n'
DIR_COMMAND_NAME = 'd\n'
STREAM_COMMAND_NAME = 'S\n'
ARRAY_GET_SUB_COMMAND_NAME = 'g\n'
ARRAY_SET_SUB_COMMAND_NAME = 's\n'
ARRAY_SLICE_SUB_COMMAND_NAME = 'l\n'
ARRAY_LEN_SUB_COMMAND_NAME = 'e\n'
ARRAY_CREATE_SUB_COMMAND_NAME = 'c\n'
REFL_GET_UNKNOWN_SUB_COMMAND_NAME = 'u\n'
REFL_GET_MEMBER_SUB_COMMAND_NAME = 'm\n'
REFL_GET_JAVA_LANG_CLASS_SUB_COMMAND_NAME = 'c\n'
LIST_SORT_SUBCOMMAND_NAME = 's\n'
LIST_REVERSE_SUBCOMMAND_NAME = 'r\n'
LIST_SLICE_SUBCOMMAND_NAME = 'l\n'
LIST_CONCAT_SUBCOMMAND_NAME = 'a\n'
LIST_MULT_SUBCOMMAND_NAME = 'm\n'
LIST_IMULT_SUBCOMMAND_NAME = 'i\n'
LIST_COUNT_SUBCOMMAND_NAME = 'f\n'
FIELD_GET_SUBCOMMAND_NAME = 'g\n'
FIELD_SET_SUBCOMMAND_NAME = 's\n'
MEMORY_DEL_SUBCOMMAND_NAME = 'd\n'
MEMORY_ATTACH_SUBCOMMAND_NAME = 'a\n'
HELP_OBJECT_SUBCOMMAND_NAME = 'o\n'
HELP_CLASS_SUBCOMMAND_NAME = 'c\n'
JVM_CREATE_VIEW_SUB_COMMAND_NAME = 'c\n'
JVM_IMPORT_SUB_COMMAND_NAME = 'i\n'
JVM_SEARCH_SUB_COMMAND_NAME = 's\n'
REMOVE_IMPORT_SUB_COMMAND_NAME = 'r\n'
PYTHON_PROXY_PREFIX = 'p'
ERROR_RETURN_MESSAGE = '!xn\n'
SUCCESS_RETURN_MESSAGE = '!y\n'
OUTPUT_VOID_COMMAND = '!yv\n'
AUTH_COMMAND_NAME = 'A'
CALL_PROXY_COMMAND_NAME = 'c'
GARBAGE_COLLECT_PROXY_COMMAND_NAME = 'g'
DIR_FIELDS_SUBCOMMAND_NAME = 'f\n'
DIR_METHODS_SUBCOMMAND_NAME = 'm\n'
DIR_STATIC_SUBCOMMAND_NAME = 's\n'
DIR_JVMVIEW_SUBCOMMAND_NAME = 'v\n'

# Converters. OUTPUT_CONVERTER: type letter -> callable(text, gateway_client) used by
# get_return_value; INPUT_CONVERTER: objects with can_convert(obj) / convert(obj,
# gateway_client), tried for arguments that are not Java objects when the gateway
# auto-converts (py4jni.java_collections registers py4j's set, map and list converters).
OUTPUT_CONVERTER: dict[str, Callable[[str, Any], Any]] = {}
INPUT_CONVERTER: list[Any] = []

# What went wrong on a socket (Py4JNetworkError.when)
ERROR_ON_SEND = "on_send"
ERROR_ON_RECEIVE = "on_receive"
EMPTY_RESPONSE = "empty_response"


def escape_new_line(original: Any) -> Any:
    """Escapes backslashes, ``\\r`` and ``\\n`` (py4j's string encoding)."""
    if not original:
        return original
    return (smart_decode(original).replace("\\", "\\\\").replace("\r", "\\r")
            .replace("\n", "\\n"))


def unescape_new_line(escaped: Any) -> Any:
    """Reverses escape_new_line."""
    if not escaped:
        return escaped
    parts = escaped.split(ESCAPE_CHAR + ESCAPE_CHAR)
    return ESCAPE_CHAR.join(p.replace(ESCAPE_CHAR + "n", "\n").replace(ESCAPE_CHAR + "r", "\r")
                            for p in parts)


def smart_decode(s: Any) -> str:
    """``s`` as a str (bytes are decoded as UTF-8)."""
    if isinstance(s, str):
        return s
    if isinstance(s, bytes):
        return str(s, "utf-8")
    return str(s)


def encode_float(float_value: float) -> str:
    """A float in py4j's text form (``Infinity``, ``-Infinity``, ``NaN``)."""
    text = repr(float_value)
    return {"inf": JAVA_INFINITY, "-inf": JAVA_NEGATIVE_INFINITY, "nan": JAVA_NAN}.get(text, text)


def _decode_float(text: str) -> float:
    return float({JAVA_INFINITY: "inf", JAVA_NEGATIVE_INFINITY: "-inf", JAVA_NAN: "nan"}
                 .get(text, text))


def encode_bytearray(barray: Any) -> str:
    """Bytes (or a bytearray, a list of ints) as base64 text."""
    import base64
    return bytetostr(base64.standard_b64encode(bytes(barray)))


def decode_bytearray(encoded: str) -> bytearray:
    """Reverses encode_bytearray."""
    import base64
    return bytearray(base64.standard_b64decode(strtobyte(encoded)))


def is_python_proxy(parameter: Any) -> bool:
    """True for a Python object implementing Java interfaces (``class Java: implements``)."""
    try:
        return len(parameter.Java.implements) > 0
    except Exception:  # noqa: BLE001 - anything without a Java.implements
        return False


def get_command_part(parameter: Any, python_proxy_pool: Any = None) -> str:
    """``parameter`` in py4j's text encoding (``1`` -> ``"i1\\n"``), as py4j writes it
    on its socket. A Python proxy is put into ``python_proxy_pool``."""
    if parameter is None:
        part = NULL_TYPE
    elif isinstance(parameter, bool):
        part = BOOLEAN_TYPE + smart_decode(parameter)
    elif _is_decimal(parameter):
        part = DECIMAL_TYPE + smart_decode(parameter)
    elif isinstance(parameter, int):
        small = JAVA_MIN_INT <= parameter <= JAVA_MAX_INT
        part = (INTEGER_TYPE if small else LONG_TYPE) + smart_decode(parameter)
    elif isinstance(parameter, float):
        part = DOUBLE_TYPE + encode_float(parameter)
    elif isinstance(parameter, (bytes, bytearray)):
        part = BYTES_TYPE + encode_bytearray(parameter)
    elif isinstance(parameter, str):
        part = STRING_TYPE + escape_new_line(parameter)
    elif is_python_proxy(parameter):
        part = PYTHON_PROXY_TYPE + python_proxy_pool.put(parameter)
        for interface in parameter.Java.implements:
            part += ";" + interface
    else:
        part = REFERENCE_TYPE + parameter._get_object_id()
    return part + "\n"


def get_return_value(answer: str, gateway_client: Any, target_id: Any = None,
                     name: Any = None) -> Any:
    """Decodes py4j's ``answer`` to a command. An error answer raises: ``"xr<id>"``
    (a Java exception) raises Py4JJavaError with ``JavaObject(id, gateway_client)``,
    other errors Py4JError. py4jni passes every Java exception of a call through the
    current ``py4jni.java_gateway.get_return_value`` this way."""
    if is_error(answer)[0]:
        where = (f"{target_id}.{name}" if name is not None
                 else (target_id if target_id is not None else "the JVM"))
        if len(answer) < 2:
            raise Py4JError(f"An error occurred while calling {where}")
        value = OUTPUT_CONVERTER[answer[1]](answer[2:], gateway_client)
        if answer[1] == REFERENCE_TYPE:
            raise Py4JJavaError(f"An error occurred while calling {where}.\n", value)
        raise Py4JError(f"An error occurred while calling {where}. Trace:\n{value}\n")
    if answer[1] == VOID_TYPE:
        return None
    return OUTPUT_CONVERTER[answer[1]](answer[2:], gateway_client)


def get_error_message(answer: str, gateway_client: Any = None) -> tuple[bool, Any]:
    """``(is the answer an error, its message)``: the message of a string error answer
    (``"xs..."``), else None (null and reference answers carry none)."""
    failed = is_error(answer)[0]
    if failed and len(answer) > 1 and answer[1] == STRING_TYPE:
        return failed, OUTPUT_CONVERTER[STRING_TYPE](answer[2:], gateway_client)
    return failed, None


def compute_exception_message(default_message: str, extra_message: str | None = None) -> str:
    """``default_message``, followed by `` -- extra_message`` when there is one."""
    if extra_message:
        return f"{default_message} -- {extra_message}"
    return default_message


def is_error(answer: Any) -> tuple[bool, Any]:
    """``(True, None)`` for an error answer (empty or starting with ``x``), else
    ``(False, None)``."""
    return (not answer or answer[0] != SUCCESS, None)


def is_fatal_error(answer: Any) -> bool:
    """True for a fatal error answer (``z``): the connection must be dropped."""
    return bool(answer) and answer[0] == FATAL_ERROR


def register_output_converter(output_type: str, converter: Callable[[str, Any], Any]) -> None:
    """Sets how get_return_value decodes a value of type letter ``output_type``."""
    OUTPUT_CONVERTER[output_type] = converter


def register_input_converter(converter: Any, prepend: bool = False) -> None:
    """Adds an argument converter (``can_convert(obj)``, ``convert(obj, gateway_client)``),
    first with ``prepend``. Converters apply when the gateway auto-converts
    (``auto_convert=True``), to arguments that are not Java objects and that py4jni does
    not pass natively (None, bool, int, float, str, bytes, Decimal, JavaObject); one
    registered with ``prepend`` sees a numeric buffer before py4jni makes it a primitive
    array (py4jni/java_collections.py ``_convert_argument``)."""
    if prepend:
        INPUT_CONVERTER.insert(0, converter)
    else:
        INPUT_CONVERTER.append(converter)


register_output_converter(NULL_TYPE, lambda text, client: None)
register_output_converter(BOOLEAN_TYPE, lambda text, client: text.lower() == "true")
register_output_converter(LONG_TYPE, lambda text, client: int(text))
register_output_converter(INTEGER_TYPE, lambda text, client: int(text))
register_output_converter(DOUBLE_TYPE, lambda text, client: _decode_float(text))
register_output_converter(DECIMAL_TYPE, lambda text, client: __getattr__("Decimal")(text))


def _is_decimal(obj: Any) -> bool:
    """isinstance(obj, decimal.Decimal), without importing decimal (~8 ms) for it."""
    dec = sys.modules.get("decimal")
    return dec is not None and isinstance(obj, dec.Decimal)


def __getattr__(name: str) -> Any:
    """py4j's re-exported ``Decimal`` and base64 functions, imported on first use."""
    if name == "Decimal":
        from decimal import Decimal
        return Decimal
    if name in ("standard_b64encode", "standard_b64decode"):
        import base64
        return getattr(base64, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
register_output_converter(STRING_TYPE, lambda text, client: unescape_new_line(text))
register_output_converter(BYTES_TYPE, lambda text, client: decode_bytearray(text))


class Py4JError(Exception):
    """A py4jni failure: no such method/field/class, bad argument, gateway shut down."""

    def __init__(self, args: Any = None, cause: BaseException | None = None) -> None:
        super().__init__(args) if args is not None else super().__init__()
        self.cause = cause


class Py4JNetworkError(Py4JError):
    """Socket mode: the connection to the GatewayServer failed or was lost (``when``:
    ERROR_ON_SEND, ERROR_ON_RECEIVE or EMPTY_RESPONSE, where known)."""

    def __init__(self, args: Any = None, cause: BaseException | None = None,
                 when: str | None = None) -> None:
        super().__init__(args, cause)
        self.when = when


class Py4JAuthenticationError(Py4JError):
    """Socket mode: the GatewayServer refused the auth token."""


class Py4JJavaError(Py4JError):
    """A Java exception thrown by a call; ``java_exception`` is the Throwable (a JavaObject).

    ``str()`` ends with the Java stack trace, fetched on first use (one Java call).
    """

    _trace: str | None = None  # the stack trace, once fetched

    def __init__(self, msg: str, java_exception: Any) -> None:
        # What Py4JError.__init__(msg, java_exception) does, inlined: every Java exception
        # of a call builds one, so the error path pays one Python frame, not two.
        super(Py4JError, self).__init__(msg)
        self.cause = self.java_exception = java_exception
        self.errmsg = msg

    def __getattr__(self, name: str) -> Any:
        # py4j's exception_cmd (the command that fetches the throwable), made on first read.
        if name == "exception_cmd":
            target = getattr(self.__dict__.get("java_exception"), "_target_id", "")
            cmd = f"{EXCEPTION_COMMAND_NAME}{REFERENCE_TYPE}{target}\n{END_COMMAND_PART}"
            self.__dict__[name] = cmd
            return cmd
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _stack_trace(self) -> str:
        if self._trace is None:
            client = self.java_exception._gateway_client
            try:
                self._trace = client.stack_trace(self.java_exception)
            except Py4JError as exc:  # e.g. the gateway was shut down since
                self._trace = f"<stack trace unavailable: {exc}>"
        return self._trace

    def __str__(self) -> str:
        return f"{self.errmsg}: {self._stack_trace()}"


# A callback's tracebacks longer than this keep their head and tail: a failure deep in
# nested callbacks carries every inner traceback, and the text would grow with the
# square of the depth.
_MAX_TRACEBACK = 16 * 1024


def _innermost_error(text: str) -> str:
    """The innermost error a nested callback's text names: the one an earlier cut named,
    else the first Python or Java error line that is not a wrapper of the next level
    (Py4JJavaError, Py4JException): each level's text comes before the one it wraps."""
    marker = "innermost error: "
    at = text.find(marker)
    if at >= 0:
        end = text.find(") ...\n", at)
        return text[at + len(marker):end if end > 0 else at + 500]
    import re
    error = re.compile(r"[A-Za-z_][\w.$]*(Error|Exception|Exit|Interrupt)\b")
    for line in text.splitlines():
        line = line.removeprefix(": ")
        if error.match(line) and not any(w in line.split(":", 1)[0] for w in
                                         ("Py4JJavaError", "Py4JException", "Py4JError")):
            return line[:500]
    return "not named"


def _callback_error_text(exc: BaseException) -> str:
    """The text Java gets for ``exc`` raised in a callback, in both transports: the
    traceback in py4j's format, its middle cut when longer than _MAX_TRACEBACK."""
    import traceback  # only for a failing callback (costs ms at the first gateway)
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    if len(text) > _MAX_TRACEBACK:
        # nested callbacks embed each level's text in the next: past the limit the
        # middle goes, and the innermost Java error (what went wrong) is named
        head, tail = _MAX_TRACEBACK // 4, _MAX_TRACEBACK // 2
        root = _innermost_error(text)
        text = (f"{text[:head]}\n... ({len(text) - head - tail} characters omitted; "
                f"innermost error: {root}) ...\n{text[-tail:]}")
    return text
