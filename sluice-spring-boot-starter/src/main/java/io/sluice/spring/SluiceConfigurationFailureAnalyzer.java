package io.sluice.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Startup's report of a bad Sluice setting: the property and what is wrong with it, without the bean chain. */
class SluiceConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<SluiceConfigurationException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, SluiceConfigurationException cause) {
    String action = cause.property().startsWith("@")
        ? "Correct the annotation, or the limits it names in sluice.limits."
        : "Correct " + cause.property() + " in the application's configuration (application.yml,"
            + " application.properties, the environment), or set sluice.enabled=false to leave Sluice out.";
    return new FailureAnalysis("Sluice's configuration is invalid: " + cause.getMessage(), action, cause);
  }
}
