package org.py4jni;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A minimal class-file editor for the two edits a taken-over program needs (no ASM; the
 * JDK 17 has no public class-file API): a method's body replaced by a straight-line one
 * (no branches, so no StackMapTable), and a straight-line call put in front of a
 * method's body (every bytecode offset moves by the prologue's length, a multiple of
 * 4 so that switch padding stays valid). Constants the new code needs are appended to
 * the constant pool. Malformed input raises IllegalArgumentException.
 */
final class ClassFiles {
    private static final int UTF8 = 1, CLASS = 7, STRING = 8, METHODREF = 10,
            NAME_AND_TYPE = 12, METHOD_TYPE = 16;

    private final byte[] in;
    private final List<byte[]> added = new ArrayList<>();
    private int poolCount;      // constant_pool_count as read, plus the appended slots
    private int poolEnd;        // offset of access_flags
    private final List<Integer> entries = new ArrayList<>(); // offset of each slot (0: unused)

    private ClassFiles(byte[] bytes) {
        in = bytes;
        ByteBuffer b = ByteBuffer.wrap(bytes);
        if (b.getInt() != 0xCAFEBABE) {
            throw new IllegalArgumentException("not a class file");
        }
        b.getShort();
        b.getShort();
        poolCount = b.getShort() & 0xFFFF;
        entries.add(0);
        for (int i = 1; i < poolCount; i++) {
            entries.add(b.position());
            int tag = b.get() & 0xFF;
            switch (tag) {
                case UTF8:
                    int length = b.getShort() & 0xFFFF;
                    b.position(b.position() + length);
                    break;
                case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18:
                    b.position(b.position() + 4);
                    break;
                case 5: case 6:
                    b.position(b.position() + 8);
                    entries.add(0);
                    i++;
                    break;
                case 7: case 8: case 16: case 19: case 20:
                    b.position(b.position() + 2);
                    break;
                case 15:
                    b.position(b.position() + 3);
                    break;
                default:
                    throw new IllegalArgumentException("constant pool tag " + tag);
            }
        }
        poolEnd = b.position();
    }

    private int u2(int at) {
        return ((in[at] & 0xFF) << 8) | (in[at + 1] & 0xFF);
    }

    private int u4(int at) {
        return (u2(at) << 16) | u2(at + 2);
    }

    /** The text of a CONSTANT_Utf8 of the original pool (null for another kind). */
    private String utf8(int index) {
        int at = entries.get(index);
        if (at == 0 || in[at] != UTF8) {
            return null;
        }
        return new String(in, at + 3, u2(at + 1), StandardCharsets.UTF_8); // ASCII names
    }

    private int append(byte[] entry) {
        added.add(entry);
        return poolCount++;
    }

    private int utf8Const(String s) {
        byte[] text = s.getBytes(StandardCharsets.UTF_8);
        byte[] e = new byte[3 + text.length];
        e[0] = UTF8;
        e[1] = (byte) (text.length >> 8);
        e[2] = (byte) text.length;
        System.arraycopy(text, 0, e, 3, text.length);
        return append(e);
    }

    private int ref(int tag, int index) {
        return append(new byte[] {(byte) tag, (byte) (index >> 8), (byte) index});
    }

    private int pair(int tag, int a, int b) {
        return append(new byte[] {(byte) tag, (byte) (a >> 8), (byte) a, (byte) (b >> 8), (byte) b});
    }

    int classConst(String internalName) {
        return ref(CLASS, utf8Const(internalName));
    }

    int stringConst(String s) {
        return ref(STRING, utf8Const(s));
    }

    int methodTypeConst(String descriptor) {
        return ref(METHOD_TYPE, utf8Const(descriptor));
    }

    int methodRef(String owner, String name, String descriptor) {
        int nat = pair(NAME_AND_TYPE, utf8Const(name), utf8Const(descriptor));
        return pair(METHODREF, classConst(owner), nat);
    }

    /** Where a method's Code attribute is, found by name and descriptor. */
    private static final class Code {
        int attrStart;  // offset of the attribute (its name index)
        int attrEnd;
    }

    private int skipAttributes(int at) {
        int n = u2(at);
        at += 2;
        for (int i = 0; i < n; i++) {
            at += 6 + u4(at + 2);
        }
        return at;
    }

    private Code findCode(String name, String descriptor) {
        int at = poolEnd + 6;
        at += 2 + 2 * u2(at);               // interfaces
        int fields = u2(at);
        at += 2;
        for (int i = 0; i < fields; i++) {
            at = skipAttributes(at + 6);
        }
        int methods = u2(at);
        at += 2;
        for (int i = 0; i < methods; i++) {
            boolean match = name.equals(utf8(u2(at + 2))) && descriptor.equals(utf8(u2(at + 4)));
            int attrs = u2(at + 6);
            int a = at + 8;
            for (int k = 0; k < attrs; k++) {
                int end = a + 6 + u4(a + 2);
                if (match && "Code".equals(utf8(u2(a)))) {
                    Code c = new Code();
                    c.attrStart = a;
                    c.attrEnd = end;
                    return c;
                }
                a = end;
            }
            at = a;
        }
        return null;
    }

    /** The class file with `code` (attribute bytes from its name index on) in place of
     * the range [start, end) of the original, and the appended constants. */
    private byte[] rebuild(int start, int end, byte[] code) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(in.length + 256);
        out.write(in, 0, 8);
        out.write(poolCount >> 8);
        out.write(poolCount);
        out.write(in, 10, poolEnd - 10);
        for (byte[] e : added) {
            out.write(e, 0, e.length);
        }
        out.write(in, poolEnd, start - poolEnd);
        out.write(code, 0, code.length);
        out.write(in, end, in.length - end);
        return out.toByteArray();
    }

    /** Emits bytecode, appending the constants it needs to `cf`'s pool. */
    interface Body {
        byte[] emit(ClassFiles cf);
    }

    /**
     * Replaces the body of method `name` `descriptor` with `body` (straight-line
     * bytecode using constants made through this editor, ending in a return), with
     * `maxStack`; the locals stay as declared. Returns null when the class has no such
     * method with code.
     */
    static byte[] replaceBody(byte[] classFile, String name, String descriptor, int maxStack,
                              Body body) {
        ClassFiles cf = new ClassFiles(classFile);
        Code c = cf.findCode(name, descriptor);
        if (c == null) {
            return null;
        }
        byte[] code = body.emit(cf);
        int maxLocals = cf.u2(c.attrStart + 8);
        try {
            ByteArrayOutputStream attr = new ByteArrayOutputStream();
            DataOutputStream d = new DataOutputStream(attr);
            d.writeShort(cf.u2(c.attrStart));          // "Code"
            d.writeInt(2 + 2 + 4 + code.length + 2 + 2);
            d.writeShort(maxStack);
            d.writeShort(maxLocals);
            d.writeInt(code.length);
            d.write(code);
            d.writeShort(0);                           // no exception table
            d.writeShort(0);                           // no attributes
            return cf.rebuild(c.attrStart, c.attrEnd, attr.toByteArray());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Puts `prologue` (straight-line bytecode that leaves the operand stack empty) in
     * front of the body of method `name` `descriptor`, padded with nops to a multiple
     * of 4 bytes; exception ranges, line and local-variable tables and the first
     * StackMapTable frame move with the code. Returns null when the class has no such
     * method with code.
     */
    static byte[] prepend(byte[] classFile, String name, String descriptor, int prologueStack,
                          Body prologue) {
        ClassFiles cf = new ClassFiles(classFile);
        Code c = cf.findCode(name, descriptor);
        if (c == null) {
            return null;
        }
        byte[] pro = prologue.emit(cf);
        int delta = (pro.length + 3) & ~3;
        int at = c.attrStart + 6;
        int maxStack = Math.max(cf.u2(at), prologueStack);
        int maxLocals = cf.u2(at + 2);
        int codeLength = cf.u4(at + 4);
        int codeStart = at + 8;
        int ex = codeStart + codeLength;
        int exCount = cf.u2(ex);
        try {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            DataOutputStream d = new DataOutputStream(body);
            d.writeShort(maxStack);
            d.writeShort(maxLocals);
            d.writeInt(codeLength + delta);
            d.write(pro);
            for (int i = pro.length; i < delta; i++) {
                d.writeByte(0);                        // nop
            }
            d.write(cf.in, codeStart, codeLength);
            d.writeShort(exCount);
            for (int i = 0; i < exCount; i++) {
                int e = ex + 2 + 8 * i;
                d.writeShort(cf.u2(e) + delta);
                d.writeShort(cf.u2(e + 2) + delta);
                d.writeShort(cf.u2(e + 4) + delta);
                d.writeShort(cf.u2(e + 6));
            }
            int a = ex + 2 + 8 * exCount;
            int attrs = cf.u2(a);
            a += 2;
            List<byte[]> kept = new ArrayList<>();
            for (int k = 0; k < attrs; k++) {
                int len = cf.u4(a + 2);
                String attrName = cf.utf8(cf.u2(a));
                byte[] moved = cf.moveAttribute(attrName, a, len, delta);
                if (moved != null) {
                    kept.add(moved);
                }
                a += 6 + len;
            }
            d.writeShort(kept.size());
            for (byte[] k : kept) {
                d.write(k);
            }
            byte[] bytes = body.toByteArray();
            ByteArrayOutputStream attr = new ByteArrayOutputStream();
            DataOutputStream h = new DataOutputStream(attr);
            h.writeShort(cf.u2(c.attrStart));
            h.writeInt(bytes.length);
            h.write(bytes);
            return cf.rebuild(c.attrStart, c.attrEnd, attr.toByteArray());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A Code attribute's sub-attribute with its offsets moved by `delta`, or null to
     * drop it (type annotations and unknown attributes, whose offsets are not known). */
    private byte[] moveAttribute(String name, int at, int len, int delta) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(len + 8);
        DataOutputStream d = new DataOutputStream(out);
        int p = at + 6;
        if ("LineNumberTable".equals(name)) {
            int n = u2(p);
            d.writeShort(u2(at));
            d.writeInt(len);
            d.writeShort(n);
            for (int i = 0; i < n; i++) {
                d.writeShort(u2(p + 2 + 4 * i) + delta);
                d.writeShort(u2(p + 4 + 4 * i));
            }
            return out.toByteArray();
        }
        if ("LocalVariableTable".equals(name) || "LocalVariableTypeTable".equals(name)) {
            int n = u2(p);
            d.writeShort(u2(at));
            d.writeInt(len);
            d.writeShort(n);
            for (int i = 0; i < n; i++) {
                int e = p + 2 + 10 * i;
                d.writeShort(u2(e) + delta);           // start_pc (length unchanged)
                d.write(in, e + 2, 8);
            }
            return out.toByteArray();
        }
        if ("StackMapTable".equals(name)) {
            int n = u2(p);
            if (n == 0) {
                return java.util.Arrays.copyOfRange(in, at, at + 6 + len);
            }
            int first = p + 2;
            int type = in[first] & 0xFF;
            ByteArrayOutputStream frame = new ByteArrayOutputStream();
            DataOutputStream f = new DataOutputStream(frame);
            int rest;                                  // where the first frame's tail starts
            if (type < 64) {                           // same_frame
                f.writeByte(251);                      // same_frame_extended
                f.writeShort(type + delta);
                rest = first + 1;
            } else if (type < 128) {                   // same_locals_1_stack_item
                f.writeByte(247);                      // ..._extended
                f.writeShort(type - 64 + delta);
                rest = first + 1;
            } else if (type >= 247) {                  // every other kind has an explicit delta
                f.writeByte(type);
                f.writeShort(u2(first + 1) + delta);
                rest = first + 3;
            } else {
                throw new IllegalArgumentException("StackMapTable frame type " + type);
            }
            byte[] head = frame.toByteArray();
            int tail = at + 6 + len - rest;
            d.writeShort(u2(at));
            d.writeInt(2 + head.length + tail);
            d.writeShort(n);
            d.write(head);
            d.write(in, rest, tail);
            return out.toByteArray();
        }
        return null;
    }

    /** Big-endian bytecode assembly for the bodies above. */
    static final class Asm {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Asm op(int... bytes) {
            for (int b : bytes) {
                out.write(b);
            }
            return this;
        }

        /** An instruction with a two-byte constant-pool index. */
        Asm op2(int opcode, int index) {
            return op(opcode, index >> 8, index & 0xFF);
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }
}
