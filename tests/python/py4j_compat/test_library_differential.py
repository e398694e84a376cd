"""Everyday Java library calls checked against py4j's own server.

A corpus of calls across java.base, java.logging, java.xml, java.sql and java.net.http
(logging, resource bundles, ServiceLoader, reflection and setAccessible, method handles,
StackWalker, Class.forName, getResource, locale formatting, regex, java.time,
BigInteger/BigDecimal, collections and streams, NIO files, concurrency utilities, XML,
UUID/Base64/MessageDigest/CRC32) runs in-process and through py4j's PyPI client against
py4j's GatewayServer (the session's server, started by conftest with the fixtures jar).
Each outcome is reduced to a comparable value (the result, or the Java exception class);
any difference must be explained by a row of DEVIATIONS, which mirrors the table of
docs/deviations.md, and a row that explains nothing fails too. The same corpus runs
again in-process from a Java thread calling back into Python that calls Java.
"""
from __future__ import annotations

import gc
import os
import re
import tempfile
from decimal import Decimal
from typing import Any, Callable

import pytest

from conftest import py4j_jar, summary_line

pytestmark = pytest.mark.skipif(py4j_jar() is None, reason="py4j's jar is not installed")

PROBE = "org.py4jni.fixtures.CallerProbe"
Call = Callable[[Any], Any]
CORPUS: list[tuple[str, Call]] = []


def add(name: str, fn: Call) -> None:
    CORPUS.append((name, fn))


def J(g: Any, fqn: str) -> Any:
    """The JavaClass of `fqn` (py4j's and py4jni's gateways alike)."""
    obj = g.jvm
    for part in fqn.split("."):
        obj = getattr(obj, part)
    return obj


def cls(g: Any, fqn: str) -> Any:
    return g.jvm.java.lang.Class.forName(fqn)


def arr(g: Any, elem: Any, values: list) -> Any:
    a = g.new_array(elem, len(values))
    for i, v in enumerate(values):
        a[i] = v
    return a


def classes(g: Any, *names: str) -> Any:
    return arr(g, g.jvm.java.lang.Class, [cls(g, n) for n in names])


def objects(g: Any, *values: Any) -> Any:
    return arr(g, g.jvm.java.lang.Object, list(values))


def system_loader(g: Any) -> Any:
    return g.jvm.java.lang.ClassLoader.getSystemClassLoader()


def on_app_loader(g: Any, c: Any) -> str:
    """Where class `c` comes from, independent of which bridge's class it is."""
    loader = c.getClassLoader()
    return "app" if loader is not None and loader.equals(system_loader(g)) else str(loader)


# --- java.util.logging and System.Logger -----------------------------------------------------

for _n in ("a", "py4jni.diff", "org.example.Service", ""):
    add(f"Logger.getLogger({_n!r}).getName", lambda g, n=_n: J(g, "java.util.logging.Logger")
        .getLogger(n).getName())
add("Logger.getLogger parent name", lambda g: J(g, "java.util.logging.Logger")
    .getLogger("py4jni.diff.child").getParent().getName())
add("Logger.getGlobal", lambda g: J(g, "java.util.logging.Logger").getGlobal().getName())
add("Logger.getAnonymousLogger", lambda g: J(g, "java.util.logging.Logger")
    .getAnonymousLogger().getName())
add("Logger level", lambda g: str(J(g, "java.util.logging.Logger").getLogger("py4jni.lv")
                                  .getLevel()))
add("Logger.isLoggable INFO", lambda g: J(g, "java.util.logging.Logger").getLogger("py4jni.lv")
    .isLoggable(J(g, "java.util.logging.Level").INFO))
add("Logger.getResourceBundleName", lambda g: J(g, "java.util.logging.Logger")
    .getLogger("py4jni.rb").getResourceBundleName())
add("Level.parse", lambda g: J(g, "java.util.logging.Level").parse("WARNING").intValue())
add("Level.parse bad", lambda g: J(g, "java.util.logging.Level").parse("LOUD"))
add("LogManager logger names", lambda g: J(g, "java.util.logging.LogManager").getLogManager()
    .getLogger("") is not None)
add("System.getLogger name", lambda g: J(g, "java.lang.System").getLogger("py4jni.sys").getName())
add("System.getLogger isLoggable", lambda g: J(g, "java.lang.System").getLogger("py4jni.sys")
    .isLoggable(J(g, "java.lang.System$Logger$Level").DEBUG))
add("SimpleFormatter", lambda g: J(g, "java.util.logging.SimpleFormatter")().getClass().getName())

# --- resource bundles ------------------------------------------------------------------------

add("getBundle fixtures", lambda g: J(g, "java.util.ResourceBundle")
    .getBundle(PROBE + "$Messages").getString("greeting"))
add("getBundle fixtures keys", lambda g: J(g, "java.util.ResourceBundle")
    .getBundle(PROBE + "$Messages").keySet().size())
add("getBundle missing", lambda g: J(g, "java.util.ResourceBundle").getBundle("no.such.Bundle"))
add("getBundle with locale", lambda g: J(g, "java.util.ResourceBundle").getBundle(
    PROBE + "$Messages", J(g, "java.util.Locale").FRENCH).getString("greeting"))
add("getBundle with loader", lambda g: J(g, "java.util.ResourceBundle").getBundle(
    PROBE + "$Messages", J(g, "java.util.Locale").ROOT, system_loader(g)).getString("greeting"))
add("getBundle missing key", lambda g: J(g, "java.util.ResourceBundle")
    .getBundle(PROBE + "$Messages").getString("nope"))
add("ResourceBundle.clearCache", lambda g: J(g, "java.util.ResourceBundle").clearCache())
add("sun.util.logging resources", lambda g: J(g, "java.util.ResourceBundle").getBundle(
    "sun.util.logging.resources.logging").getString("WARNING"))

# --- ServiceLoader ---------------------------------------------------------------------------


def _providers(g: Any, service: str) -> list:
    it = J(g, "java.util.ServiceLoader").load(cls(g, service)).iterator()
    out = []
    while it.hasNext():
        out.append(it.next().getClass().getName())
    return sorted(out)


for _s in ("java.nio.file.spi.FileSystemProvider", "java.sql.Driver",
           "javax.xml.parsers.DocumentBuilderFactory", "java.nio.charset.spi.CharsetProvider",
           "java.util.spi.ToolProvider"):
    add(f"ServiceLoader.load({_s})", lambda g, s=_s: _providers(g, s))
add("ServiceLoader.load with loader", lambda g: J(g, "java.util.ServiceLoader").load(
    cls(g, "java.nio.file.spi.FileSystemProvider"), system_loader(g)).findFirst().isPresent())
add("ServiceLoader.loadInstalled", lambda g: J(g, "java.util.ServiceLoader").loadInstalled(
    cls(g, "java.nio.file.spi.FileSystemProvider")).findFirst().isPresent())
add("ServiceLoader toString", lambda g: J(g, "java.util.ServiceLoader").load(
    cls(g, "java.sql.Driver")).toString())
add("ToolProvider.findFirst", lambda g: J(g, "java.util.spi.ToolProvider").findFirst("jar")
    .isPresent())

# --- reflection and setAccessible ------------------------------------------------------------


def _method(g: Any, owner: str, name: str, *params: str) -> Any:
    return cls(g, owner).getMethod(name, classes(g, *params))


add("getMethod toString", lambda g: _method(g, "java.lang.Object", "toString").getName())
add("getMethod missing", lambda g: _method(g, "java.lang.Object", "nope"))
add("getDeclaredMethod private", lambda g: cls(g, "java.lang.String").getDeclaredMethod(
    "isLatin1", classes(g)).getName())
add("Method.invoke static", lambda g: _method(g, "java.lang.Integer", "parseInt",
                                               "java.lang.String").invoke(None, objects(g, "41")))
add("Method.invoke instance", lambda g: _method(g, "java.lang.String", "length")
    .invoke("abcd", objects(g)))
add("Method.invoke throws", lambda g: _method(g, "java.lang.Integer", "parseInt",
                                              "java.lang.String").invoke(None, objects(g, "x")))
add("Method.invoke wrong args", lambda g: _method(g, "java.lang.Integer", "parseInt",
                                                  "java.lang.String").invoke(None, objects(g)))
add("Method.setAccessible public", lambda g: _method(g, "java.lang.Object", "toString")
    .setAccessible(True))
add("Method.trySetAccessible public", lambda g: _method(g, "java.lang.Object", "hashCode")
    .trySetAccessible())
add("Method.canAccess", lambda g: _method(g, "java.lang.Object", "hashCode").canAccess(
    g.jvm.java.lang.Object()))
add("String.value trySetAccessible", lambda g: cls(g, "java.lang.String")
    .getDeclaredField("value").trySetAccessible())
add("String.value setAccessible", lambda g: cls(g, "java.lang.String")
    .getDeclaredField("value").setAccessible(True))
add("fixture field setAccessible", lambda g: cls(g, PROBE).getField("answer").setAccessible(True))
add("fixture Field.getInt", lambda g: cls(g, PROBE).getField("answer").getInt(None))
add("fixture Field.get", lambda g: cls(g, PROBE).getField("answer").get(None))
add("fixture Field.getLong", lambda g: cls(g, PROBE).getField("answer").getLong(None))
add("Integer.MAX_VALUE Field.get", lambda g: cls(g, "java.lang.Integer")
    .getField("MAX_VALUE").get(None))
add("Field.set final", lambda g: cls(g, "java.lang.Integer").getField("MAX_VALUE").set(None, 1))
add("getDeclaredConstructor newInstance", lambda g: cls(g, "java.lang.StringBuilder")
    .getDeclaredConstructor(classes(g, "java.lang.String")).newInstance(objects(g, "ab"))
    .toString())
add("Class.newInstance", lambda g: cls(g, "java.util.ArrayList").newInstance().size())
add("getMethods count Object", lambda g: len(cls(g, "java.lang.Object").getMethods()))
add("getDeclaredFields fixture", lambda g: len(cls(g, PROBE).getDeclaredFields()))
add("getConstructors count", lambda g: len(cls(g, "java.lang.StringBuilder").getConstructors()))
add("getClasses", lambda g: len(cls(g, PROBE).getClasses()))
add("getDeclaringClass", lambda g: cls(g, PROBE + "$Messages").getDeclaringClass().getName())
add("getEnclosingClass", lambda g: cls(g, PROBE + "$Messages").getEnclosingClass().getName())
add("getNestHost", lambda g: cls(g, PROBE + "$Messages").getNestHost().getName())
add("getClassLoader of fixture", lambda g: on_app_loader(g, cls(g, PROBE)))
add("getClassLoader of String", lambda g: cls(g, "java.lang.String").getClassLoader())
add("getClassLoader of java.sql", lambda g: cls(g, "java.sql.Driver").getClassLoader().getName())
add("ClassLoader.getParent", lambda g: system_loader(g).getParent().getName())
add("ClassLoader.getPlatformClassLoader", lambda g: J(g, "java.lang.ClassLoader")
    .getPlatformClassLoader().getName())
add("Proxy.isProxyClass", lambda g: J(g, "java.lang.reflect.Proxy").isProxyClass(
    cls(g, "java.lang.Object")))
add("AtomicIntegerFieldUpdater.newUpdater private", lambda g: J(
    g, "java.util.concurrent.atomic.AtomicIntegerFieldUpdater").newUpdater(
    cls(g, "java.lang.Thread"), "threadStatus"))
add("Modifier.toString", lambda g: J(g, "java.lang.reflect.Modifier").toString(
    _method(g, "java.lang.Object", "hashCode").getModifiers()))
add("Module of String", lambda g: cls(g, "java.lang.String").getModule().getName())
add("Module of fixture named", lambda g: cls(g, PROBE).getModule().isNamed())
add("Package.getPackage", lambda g: J(g, "java.lang.Package").getPackage("java.lang"))

# --- method handles --------------------------------------------------------------------------


def _lookup(g: Any) -> Any:
    return J(g, "java.lang.invoke.MethodHandles").lookup()


def _mt(g: Any, ret: str, *params: str) -> Any:
    return J(g, "java.lang.invoke.MethodType").methodType(cls(g, ret), classes(g, *params))


add("lookup lookupClass loader", lambda g: on_app_loader(g, _lookup(g).lookupClass()))
add("lookup lookupClass", lambda g: _lookup(g).lookupClass().getName())
add("lookup lookupModes", lambda g: _lookup(g).lookupModes())
add("lookup findVirtual type", lambda g: _lookup(g).findVirtual(
    cls(g, "java.lang.String"), "length", _mt(g, "int")).type().toString())
add("lookup findStatic type", lambda g: _lookup(g).findStatic(
    cls(g, "java.lang.Math"), "max", _mt(g, "int", "int", "int")).type().toString())
add("lookup findStatic invokeWithArguments", lambda g: _lookup(g).findStatic(
    cls(g, "java.lang.Math"), "max", _mt(g, "int", "int", "int"))
    .invokeWithArguments(objects(g, 3, 9)))
add("lookup findVirtual private", lambda g: _lookup(g).findVirtual(
    cls(g, "java.lang.String"), "isLatin1", _mt(g, "boolean")))
add("publicLookup", lambda g: J(g, "java.lang.invoke.MethodHandles").publicLookup()
    .lookupClass().getName())
add("privateLookupIn fixture", lambda g: J(g, "java.lang.invoke.MethodHandles").privateLookupIn(
    cls(g, PROBE), _lookup(g)).lookupClass().getName())
add("privateLookupIn String", lambda g: J(g, "java.lang.invoke.MethodHandles").privateLookupIn(
    cls(g, "java.lang.String"), _lookup(g)))
add("MethodType.toString", lambda g: _mt(g, "void", "int", "java.lang.String").toString())
add("MethodHandles.constant", lambda g: J(g, "java.lang.invoke.MethodHandles").constant(
    cls(g, "java.lang.String"), "k").invokeWithArguments(objects(g)))

# --- StackWalker and callers -----------------------------------------------------------------


def _walker(g: Any) -> Any:
    return J(g, "java.lang.StackWalker").getInstance(
        J(g, "java.lang.StackWalker$Option").RETAIN_CLASS_REFERENCE)


add("StackWalker.getCallerClass loader", lambda g: on_app_loader(g, _walker(g).getCallerClass()))
add("StackWalker.getCallerClass", lambda g: _walker(g).getCallerClass().getName())
add("StackWalker.getInstance no option getCallerClass", lambda g: J(
    g, "java.lang.StackWalker").getInstance().getCallerClass())
add("fixture whoCalls", lambda g: J(g, PROBE).whoCalls())
add("Reflection-free depth", lambda g: J(g, PROBE).depth() > 0)

# --- Class.forName and resources -------------------------------------------------------------

for _c in ("java.lang.String", "java.util.ArrayList", "java.sql.Connection",
           "java.net.http.HttpClient", "javax.xml.parsers.DocumentBuilder", PROBE,
           PROBE + "$Messages", "org.py4jni.fixtures.Differential", "no.such.Clazz", "int",
           "[Ljava.lang.String;", "java.util.logging.Logger"):
    add(f"Class.forName({_c})", lambda g, c=_c: J(g, "java.lang.Class").forName(c).getName())
    add(f"Class.forName({_c}, false, app)", lambda g, c=_c: J(g, "java.lang.Class").forName(
        c, False, system_loader(g)).getName())
add("Class.forName null loader fixture", lambda g: J(g, "java.lang.Class").forName(
    PROBE, False, None))
add("Class.forName null loader String", lambda g: J(g, "java.lang.Class").forName(
    "java.lang.String", False, None).getName())
add("ClassLoader.loadClass fixture", lambda g: system_loader(g).loadClass(PROBE).getName())
add("getResource class file", lambda g: re.sub(r"^.*!/", "", cls(g, PROBE).getResource(
    "CallerProbe.class").toString()))
add("getResource absolute", lambda g: cls(g, PROBE).getResource(
    "/org/py4jni/fixtures/CallerProbe.class") is not None)
add("getResource missing", lambda g: cls(g, PROBE).getResource("nope.txt"))
add("getResource of java.base", lambda g: cls(g, "java.lang.String").getResource(
    "String.class").getProtocol())
add("getResourceAsStream first byte", lambda g: cls(g, PROBE).getResourceAsStream(
    "CallerProbe.class").read())
add("getResourceAsStream jdk internal", lambda g: cls(g, "java.lang.Object").getResourceAsStream(
    "/jdk/internal/misc/Unsafe.class"))
add("ClassLoader.getSystemResource", lambda g: J(g, "java.lang.ClassLoader").getSystemResource(
    "org/py4jni/fixtures/CallerProbe.class") is not None)
add("Module.getResourceAsStream", lambda g: cls(g, "java.lang.Object").getModule()
    .getResourceAsStream("java/lang/Object.class").read())

# --- text, number and date formatting with locales -------------------------------------------

_LOCALES = ("en-US", "fr-FR", "de-DE", "ja-JP", "ar-EG")
for _tag in _LOCALES:
    add(f"NumberFormat {_tag}", lambda g, t=_tag: J(g, "java.text.NumberFormat").getInstance(
        J(g, "java.util.Locale").forLanguageTag(t)).format(1234567.891))
    add(f"CurrencyInstance {_tag}", lambda g, t=_tag: J(g, "java.text.NumberFormat")
        .getCurrencyInstance(J(g, "java.util.Locale").forLanguageTag(t)).format(12.5))
    add(f"String.format {_tag}", lambda g, t=_tag: J(g, "java.lang.String").format(
        J(g, "java.util.Locale").forLanguageTag(t), "%,.2f|%s", objects(g, 98765.4321, "x")))
    add(f"DateTimeFormatter {_tag}", lambda g, t=_tag: J(g, "java.time.format.DateTimeFormatter")
        .ofPattern("EEEE d MMMM uuuu", J(g, "java.util.Locale").forLanguageTag(t))
        .format(J(g, "java.time.LocalDate").of(2024, 2, 29)))
    add(f"Locale display {_tag}", lambda g, t=_tag: J(g, "java.util.Locale").forLanguageTag(t)
        .getDisplayName(J(g, "java.util.Locale").ENGLISH))
add("MessageFormat", lambda g: J(g, "java.text.MessageFormat").format(
    "{0} has {1,number,integer} items", objects(g, "cart", 3)))
add("DecimalFormat", lambda g: J(g, "java.text.DecimalFormat")("#,##0.00").format(1234.5))
add("SimpleDateFormat UTC", lambda g: _sdf(g))
add("Collator compare", lambda g: J(g, "java.text.Collator").getInstance(
    J(g, "java.util.Locale").FRENCH).compare("côte", "coté"))
add("Normalizer", lambda g: J(g, "java.text.Normalizer").normalize(
    "e\u0301", J(g, "java.text.Normalizer$Form").NFC))
add("toUpperCase tr", lambda g: g.jvm.java.lang.String("title").toUpperCase(
    J(g, "java.util.Locale").forLanguageTag("tr")))
add("BreakIterator words", lambda g: _words(g, "Hello, big world."))


def _sdf(g: Any) -> Any:
    f = J(g, "java.text.SimpleDateFormat")("yyyy-MM-dd HH:mm zzz", J(g, "java.util.Locale").US)
    f.setTimeZone(J(g, "java.util.TimeZone").getTimeZone("UTC"))
    return f.format(J(g, "java.util.Date")(86400000 * 365))


def _words(g: Any, text: str) -> int:
    it = J(g, "java.text.BreakIterator").getWordInstance()
    it.setText(text)
    n = 0
    while it.next() != -1:
        n += 1
    return n


# --- regex -----------------------------------------------------------------------------------

for _pat, _text in (("a+b", "caaab"), (r"(\d+)-(\d+)", "10-20"), ("^x", "yx"),
                    (r"\p{Lu}+", "abcDEF"), ("(", "x"), (r"(?i)hello", "HeLLo")):
    add(f"matches {_pat!r}", lambda g, p=_pat, t=_text: J(g, "java.util.regex.Pattern")
        .matches(p, t))
    add(f"find {_pat!r}", lambda g, p=_pat, t=_text: _find(g, p, t))
add("replaceAll", lambda g: g.jvm.java.lang.String("a1b22c333").replaceAll(r"\d+", "#"))
add("split", lambda g: list(g.jvm.java.lang.String("a,b,,c").split(",")))
add("Pattern.quote", lambda g: J(g, "java.util.regex.Pattern").quote("a.b"))
add("Matcher groupCount", lambda g: J(g, "java.util.regex.Pattern").compile("(a)(b)?")
    .matcher("a").groupCount())


def _find(g: Any, p: str, t: str) -> Any:
    m = J(g, "java.util.regex.Pattern").compile(p).matcher(t)
    return m.group() if m.find() else None


# --- java.time -------------------------------------------------------------------------------

add("LocalDate.parse", lambda g: J(g, "java.time.LocalDate").parse("2024-03-01").getDayOfWeek()
    .toString())
add("LocalDate.parse bad", lambda g: J(g, "java.time.LocalDate").parse("2024-13-01"))
add("LocalDate.plusMonths", lambda g: J(g, "java.time.LocalDate").of(2024, 1, 31).plusMonths(1)
    .toString())
add("Duration.parse", lambda g: J(g, "java.time.Duration").parse("PT1H30M").getSeconds())
add("Period.between", lambda g: J(g, "java.time.Period").between(
    J(g, "java.time.LocalDate").of(2000, 1, 1), J(g, "java.time.LocalDate").of(2024, 6, 15))
    .toString())
add("ZonedDateTime Paris", lambda g: J(g, "java.time.ZonedDateTime").of(
    2024, 7, 1, 12, 0, 0, 0, J(g, "java.time.ZoneId").of("Europe/Paris")).toInstant().toString())
add("ZoneId.of bad", lambda g: J(g, "java.time.ZoneId").of("Mars/Olympus"))
add("Instant.ofEpochSecond", lambda g: J(g, "java.time.Instant").ofEpochSecond(1700000000)
    .toString())
add("ChronoUnit.between", lambda g: J(g, "java.time.temporal.ChronoUnit").DAYS.between(
    J(g, "java.time.LocalDate").of(2024, 1, 1), J(g, "java.time.LocalDate").of(2024, 12, 31)))
add("Year.isLeap", lambda g: J(g, "java.time.Year").of(2100).isLeap())
add("DateTimeFormatter ISO", lambda g: J(g, "java.time.format.DateTimeFormatter").ISO_LOCAL_DATE
    .format(J(g, "java.time.LocalDate").of(2020, 2, 2)))
add("LocalTime.of bad", lambda g: J(g, "java.time.LocalTime").of(25, 0))
add("DayOfWeek display", lambda g: J(g, "java.time.DayOfWeek").MONDAY.getDisplayName(
    J(g, "java.time.format.TextStyle").FULL, J(g, "java.util.Locale").GERMAN))

# --- BigInteger / BigDecimal -----------------------------------------------------------------

for _a, _b in (("123456789012345678901234567890", "987654321"), ("-5", "3"), ("0", "7")):
    add(f"BigInteger {_a} * {_b}", lambda g, a=_a, b=_b: J(g, "java.math.BigInteger")(a)
        .multiply(J(g, "java.math.BigInteger")(b)).toString())
    add(f"BigInteger {_a} mod {_b}", lambda g, a=_a, b=_b: J(g, "java.math.BigInteger")(a)
        .mod(J(g, "java.math.BigInteger")(b)).toString())
    add(f"BigInteger {_a} gcd {_b}", lambda g, a=_a, b=_b: J(g, "java.math.BigInteger")(a)
        .gcd(J(g, "java.math.BigInteger")(b)).longValue())
add("BigInteger pow", lambda g: J(g, "java.math.BigInteger")("2").pow(100).toString())
add("BigInteger divide by zero", lambda g: J(g, "java.math.BigInteger")("2").divide(
    J(g, "java.math.BigInteger").ZERO))
add("BigInteger isProbablePrime", lambda g: J(g, "java.math.BigInteger")("1000000007")
    .isProbablePrime(20))
add("BigInteger bad", lambda g: J(g, "java.math.BigInteger")("12x"))
add("BigInteger result object", lambda g: J(g, "java.math.BigInteger").valueOf(42))
add("BigDecimal add", lambda g: J(g, "java.math.BigDecimal")("1.10").add(
    J(g, "java.math.BigDecimal")("2.205")))
add("BigDecimal from Decimal", lambda g: J(g, "java.math.BigDecimal")("0.1").add(Decimal("0.2")))
add("BigDecimal divide non-terminating", lambda g: J(g, "java.math.BigDecimal")("1").divide(
    J(g, "java.math.BigDecimal")("3")))
add("BigDecimal divide MathContext", lambda g: J(g, "java.math.BigDecimal")("1").divide(
    J(g, "java.math.BigDecimal")("3"), J(g, "java.math.MathContext").DECIMAL64))
add("BigDecimal setScale", lambda g: J(g, "java.math.BigDecimal")("2.345").setScale(
    2, J(g, "java.math.RoundingMode").HALF_EVEN))
add("BigDecimal stripTrailingZeros", lambda g: J(g, "java.math.BigDecimal")("100.000")
    .stripTrailingZeros().toPlainString())
add("BigDecimal compareTo", lambda g: J(g, "java.math.BigDecimal")("2.0").compareTo(
    J(g, "java.math.BigDecimal")("2.00")))

# --- collections and streams -----------------------------------------------------------------


def _alist(g: Any, *values: Any) -> Any:
    lst = J(g, "java.util.ArrayList")()
    for v in values:
        lst.add(v)
    return lst


add("ArrayList sort", lambda g: _sorted_list(g))
add("Collections.max", lambda g: J(g, "java.util.Collections").max(_alist(g, 3, 9, 2)))
add("Collections.frequency", lambda g: J(g, "java.util.Collections").frequency(
    _alist(g, "a", "b", "a"), "a"))
add("Collections.unmodifiableList add", lambda g: J(g, "java.util.Collections")
    .unmodifiableList(_alist(g, 1)).add(2))
add("Collections.emptyList size", lambda g: J(g, "java.util.Collections").emptyList().size())
add("Arrays.asList toString", lambda g: J(g, "java.util.Arrays").asList(objects(g, 1, "b"))
    .toString())
add("Arrays.toString int[]", lambda g: J(g, "java.util.Arrays").toString(
    arr(g, g.jvm.int, [3, 1, 2])))
add("Arrays.binarySearch", lambda g: J(g, "java.util.Arrays").binarySearch(
    arr(g, g.jvm.int, [1, 3, 5, 7]), 5))
add("HashMap get missing", lambda g: J(g, "java.util.HashMap")().get("x"))
add("TreeMap firstKey", lambda g: _treemap(g).firstKey())
add("TreeMap headMap", lambda g: _treemap(g).headMap("m").toString())
add("TreeMap empty firstKey", lambda g: J(g, "java.util.TreeMap")().firstKey())
add("ArrayDeque", lambda g: _deque(g))
add("PriorityQueue poll", lambda g: _pq(g))
add("LinkedHashSet order", lambda g: _lhs(g))
add("EnumSet allOf TimeUnit", lambda g: J(g, "java.util.EnumSet").allOf(
    cls(g, "java.util.concurrent.TimeUnit")).size())
add("List.of size", lambda g: J(g, "java.util.List").of("a", "b").size())
add("List.of null", lambda g: J(g, "java.util.List").of("a", None))
add("Map.of get", lambda g: J(g, "java.util.Map").of("k", "v").get("k"))
add("Optional.empty get", lambda g: J(g, "java.util.Optional").empty().get())
add("Optional.of orElse", lambda g: J(g, "java.util.Optional").ofNullable(None).orElse("dflt"))
add("ArrayList get out of range", lambda g: J(g, "java.util.ArrayList")().get(3))
add("stream count", lambda g: _alist(g, 1, 2, 3, 4).stream().count())
add("stream distinct count", lambda g: _alist(g, 1, 1, 2).stream().distinct().count())
add("IntStream sum", lambda g: J(g, "java.util.stream.IntStream").rangeClosed(1, 100).sum())
add("IntStream average", lambda g: J(g, "java.util.stream.IntStream").of(
    arr(g, g.jvm.int, [1, 2, 4])).average().getAsDouble())
add("Collectors.joining", lambda g: _alist(g, "x", "y").stream().collect(
    J(g, "java.util.stream.Collectors").joining("+")))
add("Collectors.toList", lambda g: _alist(g, "b", "a").stream().sorted().collect(
    J(g, "java.util.stream.Collectors").toList()))
add("Stream.of findFirst", lambda g: J(g, "java.util.stream.Stream").of(
    objects(g, "q", "r")).findFirst().get())
add("StringJoiner", lambda g: J(g, "java.util.StringJoiner")(", ", "[", "]").add("a").add("b")
    .toString())
add("BitSet", lambda g: _bitset(g))
add("Objects.requireNonNull", lambda g: J(g, "java.util.Objects").requireNonNull(None, "msg"))
add("Objects.hash", lambda g: J(g, "java.util.Objects").hash(objects(g, 1, "a")))
add("Random seeded", lambda g: J(g, "java.util.Random")(42).nextInt(1000))
add("SplittableRandom seeded", lambda g: J(g, "java.util.SplittableRandom")(7).nextInt(1000))


def _sorted_list(g: Any) -> Any:
    lst = _alist(g, "pear", "apple", "fig")
    J(g, "java.util.Collections").sort(lst)
    return lst.toString()


def _treemap(g: Any) -> Any:
    m = J(g, "java.util.TreeMap")()
    for k in ("z", "b", "q", "a"):
        m.put(k, len(k))
    return m


def _deque(g: Any) -> Any:
    d = J(g, "java.util.ArrayDeque")()
    d.push(1)
    d.addLast(2)
    d.offerFirst(0)
    return d.toString()


def _pq(g: Any) -> Any:
    q = J(g, "java.util.PriorityQueue")()
    for v in (5, 1, 3):
        q.add(v)
    return [q.poll(), q.poll()]


def _lhs(g: Any) -> Any:
    s = J(g, "java.util.LinkedHashSet")()
    for v in ("c", "a", "c", "b"):
        s.add(v)
    return s.toString()


def _bitset(g: Any) -> Any:
    b = J(g, "java.util.BitSet")()
    b.set(3)
    b.set(10)
    return [b.cardinality(), b.toString()]


# --- NIO files in a temp dir -----------------------------------------------------------------


def _tmp(g: Any) -> Any:
    return J(g, "java.nio.file.Paths").get(tempfile.mkdtemp(prefix="py4jni-diff-"),
                                           g.new_array(g.jvm.java.lang.String, 0))


def _nio(g: Any, what: str) -> Any:
    d = _tmp(g)
    Files = J(g, "java.nio.file.Files")
    try:
        f = d.resolve("a.txt")
        Files.write(f, "héllo\nworld\n".encode(), g.new_array(
            g.jvm.java.nio.file.OpenOption, 0))
        if what == "size":
            return Files.size(f)
        if what == "lines":
            return list(Files.readAllLines(f))
        if what == "exists":
            return [Files.exists(f, g.new_array(g.jvm.java.nio.file.LinkOption, 0)),
                    Files.isDirectory(d, g.new_array(g.jvm.java.nio.file.LinkOption, 0))]
        if what == "bytes":
            return Files.readAllBytes(f)
        if what == "readString":
            return Files.readString(f)
        if what == "list":
            Files.createDirectory(d.resolve("sub"), g.new_array(
                g.jvm.java.nio.file.attribute.FileAttribute, 0))
            return sorted(str(p.getFileName()) for p in Files.list(d).toArray())
        if what == "copy exists":
            return Files.copy(f, f, g.new_array(g.jvm.java.nio.file.CopyOption, 0)).getFileName()
        if what == "missing":
            return Files.readAllBytes(d.resolve("missing"))
        if what == "probe":
            return Files.probeContentType(f)
        if what == "zipfs":
            return _zipfs(g, d)
        raise AssertionError(what)
    finally:
        for name in sorted(os.listdir(str(d)), reverse=True):
            p = os.path.join(str(d), name)
            (os.rmdir if os.path.isdir(p) else os.remove)(p)
        os.rmdir(str(d))


def _zipfs(g: Any, d: Any) -> Any:
    zip_path = d.resolve("z.zip")
    env = J(g, "java.util.HashMap")()
    env.put("create", "true")
    uri = J(g, "java.net.URI").create("jar:" + zip_path.toUri().toString())
    fs = J(g, "java.nio.file.FileSystems").newFileSystem(uri, env)
    try:
        return fs.provider().getScheme()
    finally:
        fs.close()


for _w in ("size", "lines", "exists", "bytes", "readString", "list", "copy exists", "missing",
           "probe", "zipfs"):
    add(f"nio {_w}", lambda g, w=_w: _nio(g, w))
add("Paths normalize", lambda g: J(g, "java.nio.file.Paths").get(
    "/a/b/../c", g.new_array(g.jvm.java.lang.String, 0)).normalize().toString())
add("Path relativize", lambda g: J(g, "java.nio.file.Path").of("/a/b", g.new_array(
    g.jvm.java.lang.String, 0)).relativize(J(g, "java.nio.file.Path").of(
    "/a/c/d", g.new_array(g.jvm.java.lang.String, 0))).toString())
add("FileSystems.getDefault separator", lambda g: J(g, "java.nio.file.FileSystems").getDefault()
    .getSeparator())
add("Charset.forName", lambda g: J(g, "java.nio.charset.Charset").forName("latin1").name())
add("Charset.forName bad", lambda g: J(g, "java.nio.charset.Charset").forName("no-such"))
add("StandardCharsets encode", lambda g: J(g, "java.nio.charset.StandardCharsets").UTF_8
    .encode("é").remaining())
add("ByteBuffer order", lambda g: J(g, "java.nio.ByteBuffer").allocate(8).order().toString())

# --- concurrency utilities -------------------------------------------------------------------


def _executor(g: Any) -> Any:
    ex = J(g, "java.util.concurrent.Executors").newFixedThreadPool(2)
    try:
        f = ex.submit(J(g, "java.util.concurrent.Executors").callable(
            J(g, "java.lang.Thread")(), "done"))
        return f.get()
    finally:
        ex.shutdown()


add("Executor submit", _executor)
add("CompletableFuture completed", lambda g: J(g, "java.util.concurrent.CompletableFuture")
    .completedFuture("v").thenApply(J(g, "java.util.function.Function").identity()).join())
add("CompletableFuture failed", lambda g: J(g, "java.util.concurrent.CompletableFuture")
    .failedFuture(J(g, "java.lang.IllegalStateException")("boom")).join())
add("CountDownLatch", lambda g: _latch(g))
add("ConcurrentHashMap merge", lambda g: _chm(g))
add("AtomicLong", lambda g: J(g, "java.util.concurrent.atomic.AtomicLong")(5))
add("AtomicLong incrementAndGet", lambda g: J(g, "java.util.concurrent.atomic.AtomicLong")(5)
    .incrementAndGet())
add("AtomicInteger", lambda g: J(g, "java.util.concurrent.atomic.AtomicInteger")(7))
add("LongAdder", lambda g: J(g, "java.util.concurrent.atomic.LongAdder")())
add("AtomicReference", lambda g: J(g, "java.util.concurrent.atomic.AtomicReference")("r").get())
add("TimeUnit convert", lambda g: J(g, "java.util.concurrent.TimeUnit").HOURS.toMinutes(3))
add("Semaphore", lambda g: J(g, "java.util.concurrent.Semaphore")(3).availablePermits())
add("ReentrantLock", lambda g: _lock(g))
add("ThreadLocalRandom type", lambda g: J(g, "java.util.concurrent.ThreadLocalRandom").current()
    .getClass().getName())
add("ForkJoinPool common", lambda g: J(g, "java.util.concurrent.ForkJoinPool").commonPool()
    .getClass().getName())
add("LinkedBlockingQueue poll", lambda g: J(g, "java.util.concurrent.LinkedBlockingQueue")()
    .poll())


def _latch(g: Any) -> Any:
    c = J(g, "java.util.concurrent.CountDownLatch")(2)
    c.countDown()
    return c.getCount()


def _chm(g: Any) -> Any:
    m = J(g, "java.util.concurrent.ConcurrentHashMap")()
    m.put("a", 1)
    return m.getOrDefault("b", 9)


def _lock(g: Any) -> Any:
    lk = J(g, "java.util.concurrent.locks.ReentrantLock")()
    lk.lock()
    try:
        return [lk.isHeldByCurrentThread(), lk.getHoldCount()]
    finally:
        lk.unlock()


# --- XML -------------------------------------------------------------------------------------


def _dom(g: Any, text: str) -> Any:
    f = J(g, "javax.xml.parsers.DocumentBuilderFactory").newInstance()
    src = J(g, "org.xml.sax.InputSource")(J(g, "java.io.StringReader")(text))
    builder = f.newDocumentBuilder()
    builder.setErrorHandler(J(g, "org.xml.sax.helpers.DefaultHandler")())  # throws, quietly
    return builder.parse(src)


add("DOM root", lambda g: _dom(g, "<a x='1'><b/><b/></a>").getDocumentElement().getTagName())
add("DOM attribute", lambda g: _dom(g, "<a x='1'/>").getDocumentElement().getAttribute("x"))
add("DOM getElementsByTagName", lambda g: _dom(g, "<a><b/><b/></a>").getElementsByTagName("b")
    .getLength())
add("DOM malformed", lambda g: _dom(g, "<a><b></a>"))
add("DocumentBuilderFactory class", lambda g: J(g, "javax.xml.parsers.DocumentBuilderFactory")
    .newInstance().getClass().getName())
add("XPath evaluate", lambda g: J(g, "javax.xml.xpath.XPathFactory").newInstance().newXPath()
    .evaluate("count(//b)", _dom(g, "<a><b/><c><b/></c></a>")))
add("Transformer to string", lambda g: _serialize(g))
add("SAXParserFactory", lambda g: J(g, "javax.xml.parsers.SAXParserFactory").newInstance()
    .newSAXParser().getClass().getName())
add("XMLInputFactory events", lambda g: _stax(g))


def _serialize(g: Any) -> Any:
    t = J(g, "javax.xml.transform.TransformerFactory").newInstance().newTransformer()
    t.setOutputProperty("omit-xml-declaration", "yes")
    w = J(g, "java.io.StringWriter")()
    t.transform(J(g, "javax.xml.transform.dom.DOMSource")(_dom(g, "<a><b>t</b></a>")),
                J(g, "javax.xml.transform.stream.StreamResult")(w))
    return w.toString()


def _stax(g: Any) -> Any:
    r = J(g, "javax.xml.stream.XMLInputFactory").newInstance().createXMLStreamReader(
        J(g, "java.io.StringReader")("<a><b/>text</a>"))
    n = 0
    while r.hasNext():
        r.next()
        n += 1
    return n


# --- java.sql and java.net.http --------------------------------------------------------------

add("DriverManager.getConnection no driver", lambda g: J(g, "java.sql.DriverManager")
    .getConnection("jdbc:nope:x"))
add("DriverManager.getDrivers", lambda g: J(g, "java.sql.DriverManager").getDrivers()
    .hasMoreElements())
add("DriverManager.getDriver", lambda g: J(g, "java.sql.DriverManager").getDriver("jdbc:x:y"))
add("DriverManager.getLoginTimeout", lambda g: J(g, "java.sql.DriverManager").getLoginTimeout())
add("java.sql.Date.valueOf", lambda g: J(g, "java.sql.Date").valueOf("2024-05-06").toString())
add("java.sql.Timestamp.valueOf", lambda g: J(g, "java.sql.Timestamp").valueOf(
    "2024-05-06 07:08:09.5").getNanos())
add("java.sql.Types.VARCHAR", lambda g: J(g, "java.sql.Types").VARCHAR)
add("JDBCType.valueOf", lambda g: J(g, "java.sql.JDBCType").valueOf(12).getName())
add("HttpClient version", lambda g: J(g, "java.net.http.HttpClient").newHttpClient().version()
    .toString())
add("HttpRequest uri", lambda g: J(g, "java.net.http.HttpRequest").newBuilder(
    J(g, "java.net.URI").create("http://example.com/a?b=c")).GET().build().uri().getQuery())
add("HttpRequest bad uri", lambda g: J(g, "java.net.http.HttpRequest").newBuilder(
    J(g, "java.net.URI").create("ftp://x/")).build())
add("URI resolve", lambda g: J(g, "java.net.URI").create("http://h/a/b").resolve("../c")
    .toString())
add("URI bad", lambda g: J(g, "java.net.URI").create("http://[bad"))
add("URLEncoder", lambda g: J(g, "java.net.URLEncoder").encode(
    "a b&c=é", J(g, "java.nio.charset.StandardCharsets").UTF_8))
add("InetAddress loopback", lambda g: J(g, "java.net.InetAddress").getLoopbackAddress()
    .getHostAddress())
add("URL protocol", lambda g: J(g, "java.net.URL")("https://example.com:8443/p").getPort())

# --- UUID / Base64 / MessageDigest / CRC32 and friends ---------------------------------------

add("UUID.nameUUIDFromBytes", lambda g: J(g, "java.util.UUID").nameUUIDFromBytes(b"py4jni")
    .toString())
add("UUID.fromString", lambda g: J(g, "java.util.UUID").fromString(
    "123e4567-e89b-12d3-a456-426614174000").version())
add("UUID.fromString bad", lambda g: J(g, "java.util.UUID").fromString("nope"))
add("UUID.randomUUID version", lambda g: J(g, "java.util.UUID").randomUUID().version())
add("Base64 encode", lambda g: J(g, "java.util.Base64").getEncoder().encodeToString(b"\x00\xffhi"))
add("Base64 decode", lambda g: J(g, "java.util.Base64").getDecoder().decode("aGk="))
add("Base64 decode bad", lambda g: J(g, "java.util.Base64").getDecoder().decode("!!"))
add("Base64 url", lambda g: J(g, "java.util.Base64").getUrlEncoder().withoutPadding()
    .encodeToString(b"\xfb\xff"))
for _alg in ("MD5", "SHA-1", "SHA-256", "SHA3-256", "NOPE"):
    add(f"MessageDigest {_alg}", lambda g, a=_alg: J(g, "java.security.MessageDigest")
        .getInstance(a).digest(b"abc"))
add("CRC32", lambda g: _crc(g, "java.util.zip.CRC32"))
add("Adler32", lambda g: _crc(g, "java.util.zip.Adler32"))
add("CRC32C", lambda g: _crc(g, "java.util.zip.CRC32C"))
add("Deflater round trip", lambda g: _deflate(g))
add("HexFormat (JDK 17+)", lambda g: J(g, "java.util.HexFormat").of().formatHex(b"\x01\xab"))
add("SecureRandom algorithm", lambda g: J(g, "java.security.SecureRandom")().getAlgorithm())
add("KeyPairGenerator RSA", lambda g: J(g, "java.security.KeyPairGenerator").getInstance("RSA")
    .getAlgorithm())
add("Mac HmacSHA256", lambda g: _hmac(g))
add("Cipher bad", lambda g: J(g, "javax.crypto.Cipher").getInstance("NOPE/X/Y"))
add("Security providers", lambda g: J(g, "java.security.Security").getProvider("SUN").getName())


def _crc(g: Any, name: str) -> Any:
    c = J(g, name)()
    c.update(b"hello world")
    return c.getValue()


def _deflate(g: Any) -> Any:
    d = J(g, "java.util.zip.Deflater")()
    d.setInput(b"aaaaaaaaaabbbbbbbbbb" * 10)
    d.finish()
    n = d.deflate(g.new_array(g.jvm.byte, 200))
    d.end()
    return n


def _hmac(g: Any) -> Any:
    mac = J(g, "javax.crypto.Mac").getInstance("HmacSHA256")
    mac.init(J(g, "javax.crypto.spec.SecretKeySpec")(b"key", "HmacSHA256"))
    return mac.doFinal(b"msg")


# --- strings, boxes, misc java.lang ----------------------------------------------------------

add("String.join", lambda g: J(g, "java.lang.String").join("-", _alist(g, "a", "b")))
add("String.repeat", lambda g: g.jvm.java.lang.String("ab").repeat(3))
add("String.strip", lambda g: g.jvm.java.lang.String("\u2003 x \t").strip())
add("String.chars count", lambda g: g.jvm.java.lang.String("hello").chars().count())
add("Integer.parseInt bad", lambda g: J(g, "java.lang.Integer").parseInt("9" * 12))
add("Integer.toBinaryString", lambda g: J(g, "java.lang.Integer").toBinaryString(10))
add("Long.MAX_VALUE", lambda g: J(g, "java.lang.Long").MAX_VALUE)
add("Double.parseDouble", lambda g: J(g, "java.lang.Double").parseDouble("1e-3"))
add("Float.valueOf", lambda g: J(g, "java.lang.Float").valueOf("0.1"))
add("Character.getName", lambda g: J(g, "java.lang.Character").getName(0x1F600))
add("Character.isLetter", lambda g: J(g, "java.lang.Character").isLetter("é"))
add("Math.floorMod", lambda g: J(g, "java.lang.Math").floorMod(-7, 3))
add("Math.addExact overflow", lambda g: J(g, "java.lang.Math").addExact(2**31 - 1, 1))
add("StrictMath.sqrt", lambda g: J(g, "java.lang.StrictMath").sqrt(2.0))
add("System.getProperty java.specification.version", lambda g: J(g, "java.lang.System")
    .getProperty("java.specification.version"))
add("System.getProperty missing", lambda g: J(g, "java.lang.System").getProperty("no.such.prop"))
add("System.lineSeparator", lambda g: J(g, "java.lang.System").lineSeparator())
add("System.identityHashCode null", lambda g: J(g, "java.lang.System").identityHashCode(None))
add("Runtime.availableProcessors", lambda g: J(g, "java.lang.Runtime").getRuntime()
    .availableProcessors() > 0)
add("Runtime.version feature", lambda g: J(g, "java.lang.Runtime").version().feature())
add("Enum valueOf", lambda g: J(g, "java.util.concurrent.TimeUnit").valueOf("SECONDS").ordinal())
add("Enum valueOf bad", lambda g: J(g, "java.util.concurrent.TimeUnit").valueOf("EONS"))
add("StringBuilder reverse", lambda g: J(g, "java.lang.StringBuilder")("abc").reverse().toString())
add("Thread.currentThread getName", lambda g: J(g, "java.lang.Thread").currentThread().getName())
add("Thread context loader", lambda g: on_app_loader(g, _ctx_loader_owner(g)))
add("Thread isDaemon", lambda g: J(g, "java.lang.Thread").currentThread().isDaemon())
add("Thread group", lambda g: J(g, "java.lang.Thread").currentThread().getThreadGroup().getName())
add("InheritableThreadLocal", lambda g: J(g, "java.lang.InheritableThreadLocal")().get())
add("ProcessHandle pid positive", lambda g: J(g, "java.lang.ProcessHandle").current().pid() > 0)


def _ctx_loader_owner(g: Any) -> Any:
    """A class loaded through the thread's context class loader (the app loader)."""
    return J(g, "java.lang.Thread").currentThread().getContextClassLoader().loadClass(PROBE)


# --- outcomes --------------------------------------------------------------------------------

_IDENTITY_HASH = re.compile(r"@[0-9a-f]{1,8}\b")


def outcome(g: Any, fn: Call) -> tuple:
    """The comparable result of one call: ("value", ...) or ("error", class)."""
    try:
        return ("value",) + _plain(fn(g))
    except Exception as e:  # noqa: BLE001 - the exception class is the outcome
        name = type(e).__name__
        java = getattr(e, "java_exception", None)
        if java is not None:
            name += ":" + java.getClass().getName()
        return ("error", name)


def _plain(r: Any) -> tuple:
    if isinstance(r, list):
        return ("list", tuple(_plain(x) for x in r))
    if isinstance(r, str):
        return ("str", _IDENTITY_HASH.sub("@hash", r))
    if r is None or isinstance(r, (bool, int, bytes, Decimal)):
        return (type(r).__name__, r)
    if isinstance(r, float):
        return ("float", repr(r))
    return ("JavaObject", r.getClass().getName(), _plain(r.toString())[1])


# --- documented deviations (docs/deviations.md) ----------------------------------

_PY4J_CLASS = re.compile(r"^py4j\.")


def _caller_class(name: str, ours: tuple, theirs: tuple) -> bool:
    """The caller a caller-sensitive method sees is py4jni's org.py4jni.CallerFrame where
    py4j's server shows one of its own classes (py4j.reflection.*, py4j.commands.*):
    both on the application class loader, in its unnamed module."""
    return (ours[0] == theirs[0] == "value" and ours[1:] == ("str", "org.py4jni.CallerFrame")
            and theirs[1] == "str" and bool(_PY4J_CLASS.match(theirs[2])))


def _own_stack_walk(name: str, ours: tuple, theirs: tuple) -> bool:
    """A method outside the JDK that looks for its caller itself (StackWalker) finds none
    when Python calls it directly in-process (no Java frame below it); under py4j its
    caller is py4j's server class. In a callback it is the caller of the callback."""
    return (name == "fixture whoCalls" and theirs[0] == "value" and bool(
        _PY4J_CLASS.match(str(theirs[2]))) and (
        ours == ("error", "Py4JJavaError:java.lang.IllegalCallerException")
        or (ours[0] == "value" and not _PY4J_CLASS.match(str(ours[2])))))


def _number_results(name: str, ours: tuple, theirs: tuple) -> bool:
    """py4j returns any other Number (AtomicLong, AtomicInteger, LongAdder) as a Python
    int of its text; py4jni returns the object itself (so calling a method of it fails
    in py4j's client)."""
    if name == "AtomicLong incrementAndGet":
        return ours == ("value", "int", 6) and theirs == ("error", "AttributeError")
    return (ours[0] == "value" and ours[1] == "JavaObject"
            and ours[2].startswith("java.util.concurrent.atomic.")
            and theirs == ("value", "int", int(ours[3])))


def _thread(name: str, ours: tuple, theirs: tuple) -> bool:
    """Calls run on the calling Python thread's own Java thread, attached as a daemon
    (py4j: its server's connection thread, not a daemon, whose name counts the server's
    threads)."""
    if name == "Thread isDaemon":
        return ours == ("value", "bool", True) and theirs == ("value", "bool", False)
    return (name == "Thread.currentThread getName" and ours[0] == theirs[0] == "value"
            and bool(re.match(r"^Thread-\d+$", str(theirs[2])))
            and bool(re.match(r"^(Thread-\d+|main)$", str(ours[2]))))


def _static_shared_name(name: str, ours: tuple, theirs: tuple) -> bool:
    """A static method whose name an instance method of the class shares: py4j looks at
    the first method of that name in Class.getMethods() order (which HotSpot does not
    fix; on JDK 25 MessageFormat's instance format comes first) and answers "does not
    exist"; py4jni finds the static method."""
    return name in STATIC_SHARED and ours[0] == "value" and theirs == ("error", "Py4JError")


# Calls of a static method that shares its name with instance methods of its class.
STATIC_SHARED = {"MessageFormat"}

DEVIATIONS: dict[str, tuple[str, Callable[[str, tuple, tuple], bool]]] = {
    "caller class of caller-sensitive methods": (
        "org.py4jni.CallerFrame instead of a py4j class (same loader and module)",
        _caller_class),
    "own stack walk outside the JDK": (
        "no Java caller below a method Python calls directly", _own_stack_walk),
    "other Number results": (
        "py4j turns AtomicLong/AtomicInteger/LongAdder results into ints", _number_results),
    "the Java thread of a call": (
        "the calling Python thread's own daemon Java thread", _thread),
    "static method sharing its name with instance methods": (
        "py4jni finds the static method whatever the getMethods() order",
        _static_shared_name),
}

# Deviations that depend on an order the JVM does not fix (they need not show in a run).
ORDER_DEPENDENT = {"static method sharing its name with instance methods"}


class _RunCorpus:
    """A java.util.function.Supplier running the corpus on the thread Java calls it on."""

    def __init__(self, g: Any) -> None:
        self.g = g
        self.outcomes: list[tuple] = []

    def get(self) -> Any:
        self.outcomes = [outcome(self.g, fn) for _, fn in CORPUS]
        return None

    class Java:
        implements = ["java.util.function.Supplier"]


@pytest.fixture(scope="module")
def py4j_gateway(py4j_server: int):
    """py4j's own Python client connected to the session's py4j GatewayServer."""
    from py4j.java_gateway import GatewayParameters, JavaGateway
    gw = JavaGateway(gateway_parameters=GatewayParameters(port=py4j_server))
    yield gw
    gc.collect()  # py4j's finalizers release their objects while the server still runs
    gw.close()


@pytest.fixture(scope="module")
def theirs(py4j_gateway: Any) -> list[tuple]:
    return [outcome(py4j_gateway, fn) for _, fn in CORPUS]


def _compare(ours: list[tuple], theirs: list[tuple], where: str) -> set[str]:
    unexplained, used, documented = [], set(), 0
    for (name, _), o, t in zip(CORPUS, ours, theirs):
        if o == t:
            continue
        why = [d for d, (_, rule) in DEVIATIONS.items() if rule(name, o, t)]
        if why:
            used.update(why)
            documented += 1
        else:
            unexplained.append(f"{name}: py4jni {o} != py4j {t}")
    summary_line(f"library differential, {where}: {len(CORPUS)} calls, "
                 f"{len(CORPUS) - len(unexplained) - documented} as py4j, {documented} "
                 f"differing as documented, explained by {len(used)} of {len(DEVIATIONS)} documented deviations: {sorted(used)}")
    assert not unexplained, (f"{len(unexplained)} of {len(CORPUS)} differ ({where}):\n"
                             + "\n".join(unexplained))
    return used


def test_corpus_size():
    assert len(CORPUS) >= 200
    assert len({name for name, _ in CORPUS}) == len(CORPUS), "call names must be unique"


def test_library_calls_match_py4j(inproc_gateway, theirs):
    ours = [outcome(inproc_gateway, fn) for _, fn in CORPUS]
    used = _compare(ours, theirs, "from a Python thread")
    stale = set(DEVIATIONS) - used - ORDER_DEPENDENT
    assert not stale, f"deviations that explain nothing any more: {stale}"


def test_library_calls_from_a_java_callback_thread(inproc_gateway, theirs):
    run = _RunCorpus(inproc_gateway)
    J(inproc_gateway, PROBE).onThread(run)
    assert len(run.outcomes) == len(CORPUS)
    _compare(run.outcomes, theirs, "from a Java thread calling back into Python")


def test_library_calls_in_socket_mode(py4j_server, theirs):
    """py4jni's socket client against the same py4j server: py4j's own answers, every
    call (the server decides conversions and callers, as for py4j's client); only the
    number in the server's connection thread name (Thread-N) depends on the connection."""
    from py4jni import GatewayParameters, JavaGateway
    gw = JavaGateway(gateway_parameters=GatewayParameters(port=py4j_server))
    try:
        ours = [outcome(gw, fn) for _, fn in CORPUS]
    finally:
        gc.collect()
        gw.close()
    differ = [f"{name}: py4jni socket {o} != py4j {t}"
              for (name, _), o, t in zip(CORPUS, ours, theirs)
              if o != t and not _same_thread_kind(name, o, t)]
    summary_line(f"library differential, socket mode: {len(CORPUS)} calls, "
                 f"{len(CORPUS) - len(differ)} as py4j")
    assert not differ, "\n".join(differ)


def _same_thread_kind(name: str, ours: tuple, theirs: tuple) -> bool:
    """Both are py4j server connection threads (Thread-N), on different connections."""
    return (name == "Thread.currentThread getName" and ours[:2] == theirs[:2] == ("value", "str")
            and all(re.match(r"^Thread-\d+$", x[2]) for x in (ours, theirs)))
