// The SystemDS operations of perf/systemds_breakdown.py run from Java alone, no Python:
// the floor under any bridge. Each operation is what SystemDS's Python client asks of its
// JVM for one compute(): prepareScript of the DML script it generated, executeScript,
// the scalar result read back (and for SUM, the 2x2 input set first).
// Run by java's source-file mode, its class path SystemDS's jars:
//   java --add-modules=jdk.incubator.vector -cp SystemDS.jar:lib/* perf/SystemDSFloor.java \
//     ROUNDS OPS [CONFIG]
// (CONFIG: the configuration file SystemDS's Python client gives its JVM's -config).
// Prints one line per scenario: "NAME prepare execute result total" (median seconds of
// the rounds, per operation).
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.apache.sysds.api.DMLScript;
import org.apache.sysds.api.jmlc.Connection;
import org.apache.sysds.api.jmlc.PreparedScript;
import org.apache.sysds.api.jmlc.ResultVariables;

public class SystemDSFloor {
    static final String SCALAR = "V0=3;\nV1=V0+4\nwrite(V1, './tmp');\n";
    static final String SUM = "V0=read('./tmp/V0',rows=2,cols=2);\nV1=sum(V0);\nwrite(V1, './tmp');\n";

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int ops = Integer.parseInt(args[1]);
        if (args.length > 2) {
            DMLScript.loadConfiguration(args[2]);  // as PythonDMLScript.main does
        }
        Connection conn = new Connection();  // as PythonDMLScript's constructor does
        double[][] ones = {{1, 1}, {1, 1}};
        for (String name : new String[] {"SDS-SCALAR", "SDS-SUM"}) {
            boolean sum = name.equals("SDS-SUM");
            String script = sum ? SUM : SCALAR;
            String[] inputs = sum ? new String[] {"V0"} : new String[0];
            String[] outputs = {"V1"};
            List<double[]> samples = new ArrayList<>();
            for (int round = -1; round < rounds; round++) {  // round -1 warms up
                long prepare = 0, execute = 0, result = 0;
                for (int i = 0; i < ops; i++) {
                    long t0 = System.nanoTime();
                    PreparedScript ps = conn.prepareScript(script, inputs, outputs);
                    if (sum) {
                        ps.setMatrix("V0", ones);
                    }
                    long t1 = System.nanoTime();
                    ResultVariables rv = ps.executeScript();
                    long t2 = System.nanoTime();
                    double v = rv.getScalarObject("V1").getDoubleValue();
                    if (v != (sum ? 4 : 7)) {
                        throw new IllegalStateException(name + " gave " + v);
                    }
                    long t3 = System.nanoTime();
                    prepare += t1 - t0;
                    execute += t2 - t1;
                    result += t3 - t2;
                }
                if (round >= 0) {
                    samples.add(new double[] {prepare / 1e9 / ops, execute / 1e9 / ops,
                                              result / 1e9 / ops,
                                              (prepare + execute + result) / 1e9 / ops});
                }
            }
            StringBuilder line = new StringBuilder(name);
            for (int k = 0; k < 4; k++) {
                List<Double> col = new ArrayList<>();
                for (double[] s : samples) {
                    col.add(s[k]);
                }
                Collections.sort(col);
                line.append(' ').append(col.get(col.size() / 2));
            }
            System.out.println(line);
        }
        conn.close();
    }
}
