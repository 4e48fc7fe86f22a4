// Package othertools checks that circuitgen's output never stops another
// generator that loads the package: moq, run before or after circuitgen,
// after the guarded interface gained a method.
package othertools
