import { ArrayMaxSize, IsArray, IsIn, IsInt, IsOptional, IsString, Matches, MaxLength, Min } from 'class-validator';
import { CAPABILITIES, type Capability, type DeploymentSettings } from '../../../events/index.js';
import { DefinitionMember, limitsOf, readLimitsMapping } from '../../admin/index.js';
import type { DefinitionNode } from '../../../src/kernel/index.js';

/** A model at a provider; the names match the YAML configuration. */
export class DeploymentSettingsDto {
  @IsString() @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { message: 'provider must be a provider id' })
  provider!: string;

  @IsString() @MaxLength(256)
  model!: string;

  @IsOptional() @IsString() @MaxLength(64)
  region?: string | null;

  @IsArray() @ArrayMaxSize(CAPABILITIES.length) @IsIn(CAPABILITIES, { each: true })
  capabilities!: Capability[];

  @IsInt() @Min(1)
  contextWindow!: number;

  @IsInt() @Min(1)
  maxOutputTokens!: number;

  @IsOptional() @IsString() @MaxLength(128)
  quotaGroup?: string | null;

  /** The file's `limits` mapping, validated by the file's reader. */
  @IsOptional() @DefinitionMember(readLimitsMapping)
  limits?: DefinitionNode | null;
}

export class RegisterDeploymentDto extends DeploymentSettingsDto {
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { message: 'id must use letters, digits, ".", "_" and "-" (at most 64)' })
  id!: string;
}

export function deploymentSettingsOf(dto: DeploymentSettingsDto): DeploymentSettings {
  return {
    providerId: dto.provider,
    model: dto.model,
    region: dto.region ?? null,
    capabilities: dto.capabilities,
    contextWindow: dto.contextWindow,
    maxOutputTokens: dto.maxOutputTokens,
    quotaGroup: dto.quotaGroup ?? null,
    limits: limitsOf(dto.limits),
  };
}
