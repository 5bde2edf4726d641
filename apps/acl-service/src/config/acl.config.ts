import { baseConfigSchema, httpConfigSchema, loadConfig } from '@kb/config';
import type { z } from 'zod';

export const aclConfigSchema = baseConfigSchema.extend(httpConfigSchema(3006).shape);
export type AclConfig = z.infer<typeof aclConfigSchema>;
export const loadAclConfig = (): AclConfig => loadConfig(aclConfigSchema);
