export * from './events/envelope';
export * from './events/document.events';
export * from './events/acl.events';
export * from './events/chunk';
export * from './events/topics';
export * from './tenancy';
export * from './filter';
export * as kbv1 from './generated/kb/v1/kb';
export * as aclv1 from './generated/kb/v1/acl';
