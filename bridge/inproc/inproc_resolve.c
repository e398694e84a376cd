/* bridge/inproc/inproc_resolve.c - class registry and the (class, name, argument kinds) cache.
 *
 * Resolution runs in Java (org.py4jni.Bridge) on a miss; the hit path is a hash, a
 * lock-free walk of one bucket and a key compare.
 */
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "fault.h"
#include "idtable.h"
#include "inproc_internal.h"
#include "jstrings.h"
#include "jvm.h"
#include "jvm_classes.h"

static p4j_idtable registry;          /* class id (Bridge.classInfo) -> p4jj_class */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

p4jj_class *p4jj_class_get(JNIEnv *env, jclass cls, p4j_error *err)
{
    jlong info = (*env)->CallStaticLongMethod(env, p4j_jc.Bridge, p4j_jc.Bridge_classInfo, cls);
    if (p4j_jvm_capture_exception(env, err) != P4J_OK)
        return NULL;
    if (P4J_FAULT("class.lookup")) {
        p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: injected fault class.lookup");
        return NULL;
    }
    uint32_t id = (uint32_t)(info >> 8);
    if (id >= P4J_IDTABLE_MAX) {
        p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: too many distinct Java classes");
        return NULL;
    }
    p4jj_class *pc = p4j_idtable_get(&registry, id);
    if (pc)
        return pc;

    pthread_mutex_lock(&registry_lock);
    pc = p4j_idtable_get(&registry, id);
    if (!pc && (pc = calloc(1, sizeof *pc))) {
        pc->cls = (jclass)p4j_jvm_global_new(env, cls);
        pc->id = id;
        pc->role = (char)(info & 0xff);
        pthread_mutex_init(&pc->lock, NULL);
        if (!pc->cls || p4j_idtable_put(&registry, id, pc) != pc) {
            p4j_jvm_global_delete(env, pc->cls);
            free(pc);
            pc = NULL;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    if (!pc)
        p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
    return pc;
}

p4jj_class *p4jj_class_of(JNIEnv *env, jobject obj, p4j_error *err)
{
    jclass cls = (*env)->GetObjectClass(env, obj);
    p4jj_class *pc = p4jj_class_get(env, cls, err);
    (*env)->DeleteLocalRef(env, cls);
    return pc;
}

char p4j_arg_key(const p4j_value *v)
{
    switch (v->kind) {
    case P4J_NULL: return 'n';
    case P4J_BOOL: return 'b';
    case P4J_INT: return 'i';
    case P4J_LONG: return 'L';
    case P4J_DOUBLE: return 'd';
    case P4J_DECIMAL: return 'D';
    case P4J_STRING: return 's';
    case P4J_BYTES: return 'j';
    case P4J_PROXY: return 'f';
    default: return 'r';
    }
}

static uint64_t key_hash(p4jj_member_kind kind, const char *name, size_t name_len,
                         const char *keys, p4jj_class *const *arg_cls, size_t nargs)
{
    /* The name contributes its length and first and last 8 bytes: names are compared
     * in full on a hit, so the hash only has to spread them over buckets. */
    uint64_t head = 0, tail = 0;
    memcpy(&head, name, name_len < 8 ? name_len : 8);
    if (name_len > 8)
        memcpy(&tail, name + name_len - 8, 8);
    uint64_t h = (1469598103934665603ull ^ (uint64_t)kind ^ (name_len << 56)) * 1099511628211ull;
    h = (h ^ head) * 1099511628211ull;
    h = (h ^ tail) * 1099511628211ull;
    for (size_t i = 0; i < nargs; i++) {
        h = (h ^ (unsigned char)keys[i]) * 1099511628211ull;
        if (arg_cls[i])
            h = (h ^ arg_cls[i]->id) * 1099511628211ull;
    }
    return h ^ nargs;
}

static p4jj_member *bucket_find(p4jj_class *pc, uint64_t h, p4jj_member_kind kind,
                               const char *name, size_t name_len, const char *keys,
                               p4jj_class *const *arg_cls, size_t nargs)
{
    p4jj_member *m = __atomic_load_n(&pc->buckets[h % P4J_CLASS_BUCKETS], __ATOMIC_ACQUIRE);
    for (; m; m = m->next) {
        if (m->hash == h && m->kind == kind && m->nargs == nargs &&
            m->name_len == name_len && memcmp(m->name, name, name_len) == 0 &&
            memcmp(m->keys, keys, nargs) == 0 &&
            memcmp(m->arg_cls, arg_cls, nargs * sizeof *arg_cls) == 0)
            return m;
    }
    return NULL;
}

p4j_rconv p4j_rconv_of(const char *desc)
{
    switch (desc[0]) {
    case 'V': return RCONV_VOID;
    case 'Z': return RCONV_Z;
    case 'B': return RCONV_B;
    case 'C': return RCONV_C;
    case 'S': return RCONV_S;
    case 'I': return RCONV_I;
    case 'J': return RCONV_J;
    case 'F': return RCONV_F;
    case 'D': return RCONV_D;
    default:
        if (strcmp(desc, "Ljava/lang/String;") == 0)
            return RCONV_STRING;
        if (strcmp(desc, "[B") == 0)
            return RCONV_BYTES;
        return RCONV_OBJECT;
    }
}

/* The conversion for an argument of kind letter `key` to parameter descriptor `desc`. */
p4j_conv p4j_conv_for(const char *desc, char key)
{
    static const struct { const char *desc; char key; p4j_conv conv; } boxes[] = {
        {"Ljava/lang/Integer;", 'i', CONV_BOX_I},   {"Ljava/lang/Long;", 'i', CONV_BOX_J},
        {"Ljava/lang/Long;", 'L', CONV_BOX_J},      {"Ljava/lang/Short;", 'i', CONV_BOX_S},
        {"Ljava/lang/Byte;", 'i', CONV_BOX_B},      {"Ljava/lang/Double;", 'd', CONV_BOX_D},
        {"Ljava/lang/Float;", 'd', CONV_BOX_F},     {"Ljava/lang/Boolean;", 'b', CONV_BOX_Z},
        {"Ljava/lang/Character;", 's', CONV_BOX_C},
    };
    switch (desc[0]) { /* a primitive takes only the Python kinds that convert to it */
    case 'Z': return key == 'b' ? CONV_Z : CONV_INVALID;
    case 'B': return key == 'i' ? CONV_B : CONV_INVALID;
    case 'C': return key == 's' ? CONV_C : CONV_INVALID;
    case 'S': return key == 'i' ? CONV_S : CONV_INVALID;
    case 'I': return key == 'i' ? CONV_I : CONV_INVALID;
    case 'J': return key == 'i' || key == 'L' ? CONV_J : CONV_INVALID;
    case 'F': return key == 'd' ? CONV_F : CONV_INVALID;
    case 'D': return key == 'd' ? CONV_D : CONV_INVALID;
    default: break;
    }
    for (size_t i = 0; i < sizeof boxes / sizeof boxes[0]; i++)
        if (boxes[i].key == key && strcmp(boxes[i].desc, desc) == 0)
            return boxes[i].conv;
    switch (key) { /* a general reference parameter: the Python value's natural box */
    case 'n': return CONV_NULL;
    case 'b': return CONV_BOX_Z;
    case 'i': return CONV_BOX_I;
    case 'L': return CONV_BOX_J;
    case 'd': return CONV_BOX_D;
    case 'D': return CONV_DECIMAL;
    case 's': return CONV_STRING;
    case 'j': return CONV_BYTES;
    case 'f': return CONV_PROXY;
    default: return CONV_REF;
    }
}

char *p4jj_class_name(JNIEnv *env, jclass cls)
{
    char *name = NULL;
    jstring text = (*env)->CallObjectMethod(env, cls, p4j_jc.Class_getName);
    if (!(*env)->ExceptionCheck(env) && text)
        name = p4j_jstring_utf8(env, text);
    (*env)->ExceptionClear(env);
    if (text)
        (*env)->DeleteLocalRef(env, text);
    return name;
}

const char *p4j_key_python_name(char key)
{
    switch (key) {
    case 'n': return "None";
    case 'b': return "bool";
    case 'i': case 'L': return "int";
    case 'd': return "float";
    case 'D': return "Decimal";
    case 's': return "str";
    case 'j': return "bytes";
    case 'f': return "Python proxy";
    default: return "JavaObject";
    }
}

/* The class a reference conversion produces (NULL for null, proxies and primitives). */
static jclass produced_class(p4j_conv conv, jclass arg_cls)
{
    switch (conv) {
    case CONV_REF: return arg_cls;
    case CONV_STRING: return p4j_jc.String;
    case CONV_BYTES: return p4j_jc.ByteArray;
    case CONV_BOX_Z: return p4j_jc.Boolean;
    case CONV_BOX_B: return p4j_jc.Byte;
    case CONV_BOX_C: return p4j_jc.Character;
    case CONV_BOX_S: return p4j_jc.Short;
    case CONV_BOX_I: return p4j_jc.Integer;
    case CONV_BOX_J: return p4j_jc.Long;
    case CONV_BOX_F: return p4j_jc.Float;
    case CONV_BOX_D: return p4j_jc.Double;
    default: return NULL;
    }
}

p4j_status p4j_check_conversion(JNIEnv *env, p4j_conv conv, char key, jclass arg_cls,
                                jclass type, p4j_error *err)
{
    jclass made = produced_class(conv, arg_cls);
    if (conv == CONV_DECIMAL && p4j_jc_decimal(env, &made, NULL, err) != P4J_OK)
        return P4J_ERROR;
    if (conv != CONV_INVALID && (!made || (*env)->IsAssignableFrom(env, made, type)))
        return P4J_OK;
    char *tname = p4jj_class_name(env, type);
    char *aname = key == 'r' && arg_cls ? p4jj_class_name(env, arg_cls) : NULL;
    p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: a %s%s%s%s cannot become a Java %s",
                  p4j_key_python_name(key), aname ? " (" : "", aname ? aname : "",
                  aname ? ")" : "", tname ? tname : "value of this type");
    free(tname);
    free(aname);
    return P4J_ERROR;
}

/* Checks every argument conversion of method/constructor `m` against the parameter
 * types of reflected `member`: a conversion never hands Java a value of another type. */
static p4j_status check_plan(JNIEnv *env, const p4jj_member *m, jobject member, p4j_error *err)
{
    jobjectArray types = (*env)->CallObjectMethod(env, member,
                                                  p4j_jc.Executable_getParameterTypes);
    if (p4j_jvm_capture_exception(env, err) != P4J_OK)
        return P4J_ERROR;
    for (size_t i = 0; i < m->nargs; i++) {
        jclass type = (*env)->GetObjectArrayElement(env, types, (jsize)i);
        p4j_status st = p4j_check_conversion(env, (p4j_conv)m->conv[i], m->keys[i],
                                             m->arg_cls[i] ? m->arg_cls[i]->cls : NULL,
                                             type, err);
        (*env)->DeleteLocalRef(env, type);
        if (st != P4J_OK)
            return P4J_ERROR;
    }
    return P4J_OK;
}

const char *p4j_descriptor_end(const char *p)
{
    while (*p == '[')
        p++;
    if (*p == 'L') {
        const char *semi = strchr(p, ';');
        return semi ? semi + 1 : p + strlen(p);
    }
    return *p ? p + 1 : p;
}

/* Fills conv[] and rconv of `m` from descriptor `sig` ("(I[B)V", or a field's "I"). */
static void plan_conversions(p4jj_member *m, const char *sig)
{
    if (m->kind == P4JJ_MEMBER_FIELD || m->kind == P4JJ_MEMBER_STATIC_FIELD) {
        m->rconv = (uint8_t)p4j_rconv_of(sig);
        m->desc = strdup(sig);
        return;
    }
    const char *p = sig + 1;
    for (size_t i = 0; *p && *p != ')'; i++) {
        const char *end = p4j_descriptor_end(p);
        char one[512];
        size_t l = (size_t)(end - p) < sizeof one ? (size_t)(end - p) : sizeof one - 1;
        memcpy(one, p, l);
        one[l] = '\0';
        if (i < m->nargs) {
            m->conv[i] = (uint8_t)p4j_conv_for(one, m->keys[i]);
            m->arg_refs |= m->conv[i] >= CONV_STRING; /* STRING, BYTES, DECIMAL, boxes, proxies */
        }
        p = end;
    }
    m->rconv = m->kind == P4JJ_MEMBER_CTOR ? RCONV_OBJECT
                                      : (uint8_t)p4j_rconv_of(*p == ')' ? p + 1 : p);
}

/* Asks the helper for the member; fills mid/fid and the conversion plan. */
static p4j_status resolve_member(JNIEnv *env, p4jj_class *pc, p4jj_member *m, p4j_error *err)
{
    p4j_status st = P4J_ERROR;
    if ((*env)->PushLocalFrame(env, 16 + m->nargs) != 0)
        return p4j_jvm_capture_exception(env, err) == P4J_OK
                   ? p4j_error_set(err, P4J_ERR_MEMORY, "out of JNI local references")
                   : P4J_ERROR;
    jstring jname = p4j_jstring_from_utf8(env, m->name, err);
    jobject member = NULL;
    jstring sig = NULL;
    char *csig = NULL;
    if (!jname)
        goto done;
    if (m->kind == P4JJ_MEMBER_FIELD || m->kind == P4JJ_MEMBER_STATIC_FIELD) {
        member = (*env)->CallStaticObjectMethod(env, p4j_jc.Bridge, p4j_jc.Bridge_findField,
                                                pc->cls, jname,
                                                (jboolean)(m->kind == P4JJ_MEMBER_STATIC_FIELD));
        if (p4j_jvm_capture_exception(env, err) != P4J_OK)
            goto done;
        if (!member) {
            p4j_error_set(err, P4J_ERR_BRIDGE, "no %sfield %s",
                          m->kind == P4JJ_MEMBER_STATIC_FIELD ? "static " : "", m->name);
            goto done;
        }
        sig = (*env)->CallStaticObjectMethod(env, p4j_jc.Bridge, p4j_jc.Bridge_fieldSignature,
                                             member);
        if (p4j_jvm_capture_exception(env, err) != P4J_OK)
            goto done;
        m->fid = (*env)->FromReflectedField(env, member);
        jclass ftype = (*env)->CallObjectMethod(env, member, p4j_jc.Field_getType);
        if (p4j_jvm_capture_exception(env, err) != P4J_OK)
            goto done;
        m->ftype = (jclass)p4j_jvm_global_new(env, ftype);
        jint fmods = (*env)->CallIntMethod(env, member, p4j_jc.Field_getModifiers);
        if (p4j_jvm_capture_exception(env, err) != P4J_OK)
            goto done;
        m->final = (fmods & 0x0010) != 0; /* java.lang.reflect.Modifier.FINAL */
    } else {
        char keys[P4J_MAX_ARGS + 1];
        memcpy(keys, m->keys, m->nargs);
        keys[m->nargs] = '\0';
        jstring jkeys = (*env)->NewStringUTF(env, keys); /* ASCII: modified UTF-8 is exact */
        if (p4j_jvm_failed(env, err))
            goto done;
        jobjectArray classes = (*env)->NewObjectArray(env, m->nargs, p4j_jc.Class, NULL);
        if (p4j_jvm_failed(env, err))
            goto done;
        for (size_t i = 0; i < m->nargs; i++)
            if (m->arg_cls[i])
                (*env)->SetObjectArrayElement(env, classes, (jsize)i, m->arg_cls[i]->cls);
        if (m->kind == P4JJ_MEMBER_CTOR)
            member = (*env)->CallStaticObjectMethod(env, p4j_jc.Bridge,
                                                    p4j_jc.Bridge_findConstructor, pc->cls,
                                                    jkeys, classes);
        else
            member = (*env)->CallStaticObjectMethod(env, p4j_jc.Bridge, p4j_jc.Bridge_findMethod,
                                                    pc->cls, jname, jkeys, classes,
                                                    (jboolean)(m->kind ==
                                                               P4JJ_MEMBER_STATIC_METHOD));
        if (p4j_jvm_capture_exception(env, err) != P4J_OK)
            goto done;
        sig = (*env)->CallStaticObjectMethod(env, p4j_jc.Bridge, p4j_jc.Bridge_jniSignature,
                                             member);
        if (p4j_jvm_capture_exception(env, err) != P4J_OK)
            goto done;
        m->mid = (*env)->FromReflectedMethod(env, member);
        jint mods = (*env)->CallIntMethod(env, member, p4j_jc.Executable_getModifiers);
        if (p4j_jvm_capture_exception(env, err) != P4J_OK)
            goto done;
        m->callstatic = (mods & 0x0008) != 0; /* java.lang.reflect.Modifier.STATIC */
        if (m->kind == P4JJ_MEMBER_CTOR) {
            m->ret_cls = pc; /* a constructor makes exactly its class */
        } else {
            jclass rtype = (*env)->CallObjectMethod(env, member, p4j_jc.Method_getReturnType);
            if (p4j_jvm_failed(env, err))
                goto done;
            jint rmods = (*env)->CallIntMethod(env, rtype, p4j_jc.Class_getModifiers);
            if (p4j_jvm_failed(env, err))
                goto done;
            if ((rmods & 0x0010) && !(*env)->IsSameObject(env, rtype, p4j_jc.Object)) /* FINAL */
                m->ret_cls = p4jj_class_get(env, rtype, err);
        }
    }
    csig = p4j_jstring_utf8(env, sig);
    if (!csig) {
        p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
        goto done;
    }
    plan_conversions(m, csig);
    if (m->kind == P4JJ_MEMBER_METHOD || m->kind == P4JJ_MEMBER_STATIC_METHOD ||
        m->kind == P4JJ_MEMBER_CTOR) {
        jclass decl = (*env)->CallObjectMethod(env, member, p4j_jc.Executable_getDeclaringClass);
        if (p4j_jvm_failed(env, err))
            goto done;
        char *dname = p4jj_class_name(env, decl), keys[P4J_MAX_ARGS + 1];
        memcpy(keys, m->keys, m->nargs);
        keys[m->nargs] = '\0';
        m->short_call = p4jj_short_call(dname, m->name, csig, keys);
        free(dname);
    }
    st = m->kind == P4JJ_MEMBER_FIELD || m->kind == P4JJ_MEMBER_STATIC_FIELD
             ? P4J_OK
             : check_plan(env, m, member, err);
    if (st == P4J_OK && (m->kind == P4JJ_MEMBER_METHOD || m->kind == P4JJ_MEMBER_STATIC_METHOD))
        st = p4jj_caller_plan(env, m, member, err); /* last: nothing fails after it */
done:
    free(csig);
    (*env)->PopLocalFrame(env, NULL);
    return st;
}

/* Fills the cache key of `args`: kind letters and the classes of object arguments. With
 * `env` NULL an object argument whose class is not known yet makes it return false;
 * else the class is looked up (and cached in its ref.cls). */
static bool arg_keys(JNIEnv *env, const p4j_value *args, size_t nargs, char *keys,
                     p4jj_class **arg_cls, p4j_error *err)
{
    for (size_t i = 0; i < nargs; i++) {
        keys[i] = p4j_arg_key(&args[i]);
        arg_cls[i] = NULL;
        if (keys[i] == 'r') {
            p4j_ref *ref = (p4j_ref *)&args[i].ref; /* the cls slot is a cache */
            if (!ref->cls && (!env || !(ref->cls = p4jj_class_of(env, (jobject)ref->handle, err))))
                return false;
            arg_cls[i] = ref->cls;
        } else if (keys[i] == 'f') {
            arg_cls[i] = args[i].ref.cls; /* the proxy's class, set by the callback layer */
        }
    }
    return true;
}

p4jj_member *p4jj_member_peek(p4jj_class *pc, p4jj_member_kind kind, const char *name,
                              size_t name_len, const p4j_value *args, size_t nargs)
{
    char keys[P4J_MAX_ARGS];
    p4jj_class *arg_cls[P4J_MAX_ARGS];
    if (nargs > P4J_MAX_ARGS || !arg_keys(NULL, args, nargs, keys, arg_cls, NULL))
        return NULL;
    uint64_t h = key_hash(kind, name, name_len, keys, arg_cls, nargs);
    return bucket_find(pc, h, kind, name, name_len, keys, arg_cls, nargs);
}

/* memcmp(a, b, n) == 0 for a member name: up to 32 bytes in two overlapping loads of each
 * (no library call on a hot path), longer ones by memcmp. */
static inline bool same_name(const char *a, const char *b, size_t n)
{
    if (n >= 4 && n <= 16) {
        if (n >= 8) {
            uint64_t a0, a1, b0, b1;
            memcpy(&a0, a, 8), memcpy(&a1, a + n - 8, 8);
            memcpy(&b0, b, 8), memcpy(&b1, b + n - 8, 8);
            return ((a0 ^ b0) | (a1 ^ b1)) == 0;
        }
        uint32_t a0, a1, b0, b1;
        memcpy(&a0, a, 4), memcpy(&a1, a + n - 4, 4);
        memcpy(&b0, b, 4), memcpy(&b1, b + n - 4, 4);
        return ((a0 ^ b0) | (a1 ^ b1)) == 0;
    }
#ifdef __SSE2__
    if (n > 16 && n <= 32) {
        __m128i a0 = _mm_loadu_si128((const __m128i *)a), b0 = _mm_loadu_si128((const __m128i *)b);
        __m128i a1 = _mm_loadu_si128((const __m128i *)(a + n - 16));
        __m128i b1 = _mm_loadu_si128((const __m128i *)(b + n - 16));
        __m128i eq = _mm_and_si128(_mm_cmpeq_epi8(a0, b0), _mm_cmpeq_epi8(a1, b1));
        return _mm_movemask_epi8(eq) == 0xFFFF;
    }
#endif
    return memcmp(a, b, n) == 0;
}

p4jj_member *p4jj_member_at(void **site, p4jj_class *pc, p4jj_member_kind kind,
                            const char *name, size_t name_len, bool named,
                            const p4j_value *args, size_t nargs)
{
    p4jj_member *m = site ? __atomic_load_n((p4jj_member **)site, __ATOMIC_ACQUIRE) : NULL;
    if (!m || m->owner != pc || m->kind != kind || m->nargs != nargs ||
        (!named && (m->name_len != name_len || !same_name(m->name, name, name_len))))
        return NULL;
    for (size_t i = 0; i < nargs; i++) {
        char key = p4j_arg_key(&args[i]);
        if (key != m->keys[i] ||
            ((key == 'r' || key == 'f') && args[i].ref.cls != m->arg_cls[i]))
            return NULL; /* another overload may apply: resolve by the full key */
    }
    return m;
}

p4jj_member *p4jj_member_find(JNIEnv *env, p4jj_class *pc, p4jj_member_kind kind,
                              const char *name, size_t name_len, const p4j_value *args,
                              size_t nargs, p4j_error *err)
{
    if (nargs > P4J_MAX_ARGS) {
        p4j_error_set(err, P4J_ERR_BRIDGE, "py4jni: at most %d arguments per call (got %zu)",
                      P4J_MAX_ARGS, nargs);
        return NULL;
    }
    char keys[P4J_MAX_ARGS];
    p4jj_class *arg_cls[P4J_MAX_ARGS];
    if (!arg_keys(env, args, nargs, keys, arg_cls, err))
        return NULL;
    uint64_t h = key_hash(kind, name, name_len, keys, arg_cls, nargs);
    p4jj_member *m = bucket_find(pc, h, kind, name, name_len, keys, arg_cls, nargs);
    if (__builtin_expect(m != NULL, 1))
        return m;

    m = P4J_FAULT("member.alloc") ? NULL : calloc(1, sizeof *m);
    char *copy = malloc(name_len + 1);
    if (!m || !copy) {
        free(m);
        free(copy);
        p4j_error_set(err, P4J_ERR_MEMORY, "out of memory");
        return NULL;
    }
    memcpy(copy, name, name_len);
    copy[name_len] = '\0';
    m->hash = h;
    m->owner = pc;
    m->kind = kind;
    m->name = copy;
    m->name_len = name_len;
    m->nargs = (uint8_t)nargs;
    memcpy(m->keys, keys, nargs);
    memcpy(m->arg_cls, arg_cls, nargs * sizeof *arg_cls);
    if (resolve_member(env, pc, m, err) != P4J_OK) {
        free(copy);
        free(m);
        return NULL;
    }
    pthread_mutex_lock(&pc->lock);
    p4jj_member *raced = bucket_find(pc, h, kind, name, name_len, keys, arg_cls, nargs);
    if (raced) {
        p4j_jvm_global_delete(env, m->via_frame);
        free(copy);
        free(m);
        m = raced;
    } else {
        m->next = pc->buckets[h % P4J_CLASS_BUCKETS];
        __atomic_store_n(&pc->buckets[h % P4J_CLASS_BUCKETS], m, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&pc->lock);
    return m;
}
