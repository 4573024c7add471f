package io.freqcap.job;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import io.freqcap.operators.capping.decision.Engagements;
import io.freqcap.operators.capping.decision.HeldQueue;
import io.freqcap.operators.capping.decision.Histories;
import io.freqcap.operators.capping.decision.Lifetimes;
import io.freqcap.operators.capping.decision.Stores;
import io.freqcap.operators.capping.receipt.Receipts;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The shape of the house: modules depend one way (schema ← operators ← job), one concern per
 * package and no cycles between packages or classes, the job itself apart from the local runner,
 * the tools and the local cluster (the shaded jar needs none of them), and the decision logic free
 * of Flink types.
 */
class ArchitectureTest {
    static JavaClasses main;

    @BeforeAll
    static void importMainClasses() {
        main =
                new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                        .importPackages("io.freqcap");
        // DO_NOT_INCLUDE_JARS keeps the modules' own jars out too when the build runs from them:
        // fall back to everything under io.freqcap, tests excluded.
        // (A build of some modules only reads the others from their jars.)
        if (main.stream().noneMatch(c -> c.getPackageName().equals("io.freqcap.schema.config"))
                || main.stream()
                        .noneMatch(
                                c -> c.getPackageName().equals("io.freqcap.operators.capping"))) {
            main =
                    new ClassFileImporter()
                            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                            // the modules' test-jars (shared fixtures) are tests too
                            .withImportOption(l -> !l.contains("-tests.jar"))
                            .importPackages("io.freqcap");
        }
    }

    @Test
    void importsEveryModule() {
        for (String pkg :
                new String[] {
                    "io.freqcap.schema",
                    "io.freqcap.schema.common",
                    "io.freqcap.schema.message",
                    "io.freqcap.schema.config",
                    "io.freqcap.schema.decision",
                    "io.freqcap.schema.history",
                    "io.freqcap.schema.segment",
                    "io.freqcap.schema.mirror",
                    "io.freqcap.operators.capping",
                    "io.freqcap.operators.capping.rule",
                    "io.freqcap.operators.capping.history",
                    "io.freqcap.operators.capping.state",
                    "io.freqcap.operators.capping.decision",
                    "io.freqcap.operators.control",
                    "io.freqcap.operators.backtest",
                    "io.freqcap.operators.segments",
                    "io.freqcap.operators.mirror",
                    "io.freqcap.job",
                    "io.freqcap.job.local",
                    "io.freqcap.job.tools",
                    "io.freqcap.job.tools.simulate",
                    "io.freqcap.job.tools.export",
                    "io.freqcap.job.tools.query",
                    "io.freqcap.job.tools.segments",
                    "io.freqcap.job.cluster"
                }) {
            if (main.stream().noneMatch(c -> c.getPackageName().equals(pkg))) {
                throw new AssertionError("no classes of " + pkg + " imported: " + main.size());
            }
        }
    }

    @Test
    void modulesDependOneWay() {
        noClasses()
                .that()
                .resideInAPackage("io.freqcap.schema..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.freqcap.operators..", "io.freqcap.job..")
                .check(main);
        noClasses()
                .that()
                .resideInAPackage("io.freqcap.operators..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.freqcap.job..")
                .check(main);
    }

    @Test
    void theJobNeedsNeitherTheLocalRunnerNorTheTools() {
        noClasses()
                .that()
                .resideInAPackage("io.freqcap.job")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "io.freqcap.job.local..",
                        "io.freqcap.job.tools..",
                        "io.freqcap.job.cluster..")
                .check(main);
    }

    @Test
    void noCyclesBetweenPackages() {
        slices().matching("io.freqcap.(**)").should().beFreeOfCycles().check(main);
    }

    @Test
    void noCyclesBetweenClasses() {
        // one slice per top-level class (its nested classes belong to it)
        SliceAssignment byTopLevelClass =
                new SliceAssignment() {
                    @Override
                    public SliceIdentifier getIdentifierOf(JavaClass c) {
                        if (!c.getPackageName().startsWith("io.freqcap")) {
                            return SliceIdentifier.ignore();
                        }
                        JavaClass top = c;
                        while (top.getEnclosingClass().isPresent()) {
                            top = top.getEnclosingClass().get();
                        }
                        return SliceIdentifier.of(top.getName());
                    }

                    @Override
                    public String getDescription() {
                        return "top-level classes of io.freqcap";
                    }
                };
        slices().assignedFrom(byTopLevelClass)
                .should()
                .beFreeOfCycles()
                // Flink's way to give a type its serializer: the type names its factory in an
                // annotation, and the factory is generic in the type.
                .ignoreDependency(
                        io.freqcap.schema.message.InboundMessage.class,
                        io.freqcap.schema.message.InboundMessageSerializer.Factory.class)
                .check(main);
    }

    @Test
    void theDecisionLogicHasNoFlinkTypes() {
        noClasses()
                .that()
                .resideInAnyPackage(
                        "io.freqcap.operators.capping.rule..",
                        "io.freqcap.operators.capping.history..",
                        "io.freqcap.operators.capping.decision..",
                        "io.freqcap.operators.backtest..",
                        "io.freqcap.operators.control..",
                        "io.freqcap.schema.config..",
                        "io.freqcap.schema.decision..",
                        "io.freqcap.schema.segment..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.apache.flink..")
                .because(
                        "the decision rule and step, the history model, control, the backtest, the"
                                + " config, decisions and segments are plain Java")
                .check(main);
        // Plain Java in rooms that also hold Flink glue.
        classes()
                .that(
                        DescribedPredicate.describe(
                                "the history cache, segment resolution, messages and histories",
                                (JavaClass c) ->
                                        startsWithAny(
                                                        c.getName(),
                                                        "io.freqcap.operators.capping.state.HistoryCache",
                                                        "io.freqcap.operators.segments.SegmentTable",
                                                        "io.freqcap.schema.history.CountedHistory",
                                                        "io.freqcap.schema.message.OutboundMessage")
                                                || c.getName()
                                                                .startsWith(
                                                                        "io.freqcap.schema.history.UserHistory")
                                                        && !c.getName().contains("Serializer")))
                .should()
                .onlyDependOnClassesThat()
                .resideOutsideOfPackage("org.apache.flink..")
                .check(main);
    }

    @Test
    void theDecisionWritesNoState() {
        // The decision computes a value (what to count, take back, hold and emit); Stores.apply
        // alone writes it, and a receipt's Effect.apply writes what Receipts.of worked out.
        DescribedPredicate<JavaClass> deciding =
                DescribedPredicate.describe(
                        "the decision rule and step, and what a receipt does",
                        (JavaClass c) ->
                                (c.getPackageName().startsWith("io.freqcap.operators.capping.rule")
                                                        || c.getPackageName()
                                                                .startsWith(
                                                                        "io.freqcap.operators.capping.decision"))
                                                && !c.getName().equals(Stores.class.getName())
                                        || c.getName().equals(Receipts.class.getName()));
        DescribedPredicate<JavaMethodCall> writes =
                DescribedPredicate.describe(
                        "a write of a store (count, uncount, hold, take, engage)",
                        (JavaMethodCall call) ->
                                writes(call, Histories.class, "count", "uncount")
                                        || writes(call, HeldQueue.class, "hold", "take")
                                        || writes(call, Engagements.class, "engage")
                                        || writes(call, Lifetimes.class, "count", "uncount"));
        noClasses()
                .that(deciding)
                .should()
                .callMethodWhere(writes)
                .because("a decision is a value that only the apply step writes")
                .check(main);
    }

    private static boolean writes(JavaMethodCall call, Class<?> store, String... names) {
        return call.getTargetOwner().isAssignableTo(store)
                && java.util.Arrays.asList(names).contains(call.getName());
    }

    private static boolean startsWithAny(String name, String... prefixes) {
        for (String p : prefixes) {
            if (name.startsWith(p)) {
                return true;
            }
        }
        return false;
    }
}
