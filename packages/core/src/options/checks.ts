/**
 * The option checks of every holdfast package, public so that the packages
 * built on core (and applications wrapping it) reject bad input as core does:
 * an `InvalidArgumentError` phrased `` Expected `what` to be …, got `…` ``.
 *
 * @module
 */
export { boolean, isDefault, lockName, nameLike, nonNegativeInteger, optionsObject, positiveInteger } from './validate.js';
