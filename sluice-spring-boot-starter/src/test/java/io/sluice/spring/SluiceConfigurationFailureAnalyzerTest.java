package io.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.io.support.SpringFactoriesLoader;

class SluiceConfigurationFailureAnalyzerTest {

  @Test
  void startupReportsThePropertyAndWhatIsWrong() {
    FailureAnalyzer analyzer = SpringFactoriesLoader.forDefaultResourceLocation(getClass().getClassLoader())
        .load(FailureAnalyzer.class, null,
            // (Boot's own analyzers want the bean factory: those that cannot be made here are skipped)
            SpringFactoriesLoader.FailureHandler.handleMessage((message, failure) -> { }))
        .stream().filter(SluiceConfigurationFailureAnalyzer.class::isInstance)
        .findFirst().orElseThrow(() -> new AssertionError("not registered in META-INF/spring.factories"));
    FailureAnalysis analysis = analyzer.analyze(new BeanCreationException("sluiceRulesFile", "failed",
        new SluiceConfigurationException("sluice.limits.api.limit", "must be positive, got 0")));
    assertThat(analysis).isNotNull();
    assertThat(analysis.getDescription())
        .isEqualTo("Sluice's configuration is invalid: sluice.limits.api.limit: must be positive, got 0");
    assertThat(analysis.getAction()).startsWith("Correct sluice.limits.api.limit in the application's configuration");
    assertThat(analyzer.analyze(new IllegalStateException("something else"))).isNull();
  }
}
